import { describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../../services/console/consoleBuild.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { startApi } from '../support/apiFixture.ts';

type Headers = Record<string, string | string[] | number | undefined>;

/** The headers every answer carries, page or API, success or refusal. */
function expectSecurityHeaders(what: string, headers: Headers) {
  const csp = String(headers['content-security-policy']);
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
      .map(([name, ...values]) => [name, values]),
  );
  expect([what, directives.get('frame-ancestors')]).toEqual([what, ["'none'"]]);
  expect([what, directives.get('script-src')]).toEqual([what, ["'self'"]]);
  expect([what, directives.get('style-src')]).toEqual([what, ["'self'"]]);
  expect([what, directives.get('object-src')]).toEqual([what, ["'none'"]]);
  expect([what, directives.get('base-uri')]).toEqual([what, ["'none'"]]);
  expect([what, csp]).not.toEqual([what, expect.stringMatching(/unsafe-(inline|eval)/)]);
  expect([what, headers['x-content-type-options'], headers['referrer-policy'], headers['x-frame-options']]).toEqual([what, 'nosniff', 'no-referrer', 'DENY']);
}

describe('security headers', () => {
  it('are on the console page, its bundles and every kind of API answer', { timeout: 120_000 }, async () => {
    await ensureConsoleBuilt(createLogger('test', 'silent'));
    await using env = await startApi();
    const noToken = { authorization: '' };

    const page = await env.app.inject({ url: '/nodes/r1-n1', headers: noToken });
    expect(page.statusCode).toBe(200);
    // The policy lets the built console run: no inline script or style, and every script and stylesheet is its own.
    const html = page.body;
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    const assets = [...html.matchAll(/<(?:script|link)[^>]*\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((url) => !url.startsWith('data:'));
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const url of assets) expect(url).toMatch(/^\/assets\/[\w.-]+$/);
    const bundle = await env.app.inject({ url: assets.find((url) => url.endsWith('.js'))!, headers: noToken });
    expect(bundle.statusCode).toBe(200);

    const answers = {
      page,
      bundle,
      list: await env.app.inject({ url: '/v1/nodes' }),
      unauthenticated: await env.app.inject({ url: '/v1/nodes', headers: noToken }),
      unknownRoute: await env.app.inject({ url: '/v1/no-such-thing' }),
      refusedCommand: await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'DC.1' } }),
      malformedJson: await env.app.inject({
        method: 'POST',
        url: '/v1/commands/site.create',
        payload: '{',
        headers: { 'content-type': 'application/json' },
      }),
      health: await env.app.inject({ url: '/healthz' }),
      openApi: await env.app.inject({ url: '/v1/openapi.json' }),
    };
    expect(Object.fromEntries(Object.entries(answers).map(([name, res]) => [name, res.statusCode]))).toEqual({
      page: 200,
      bundle: 200,
      list: 200,
      unauthenticated: 401,
      unknownRoute: 404,
      refusedCommand: 400,
      malformedJson: 400,
      health: 200,
      openApi: 200,
    });
    for (const [name, res] of Object.entries(answers)) expectSecurityHeaders(name, res.headers);
  });

  it('are on answers written to the socket directly: the event stream', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    await env.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = env.app.server.address() as { port: number };
    const abort = new AbortController();
    const stream = await fetch(`http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.>`, {
      headers: { authorization: `Bearer ${env.adminToken}` },
      signal: abort.signal,
    });
    try {
      expect([stream.status, stream.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
      expectSecurityHeaders('event stream', Object.fromEntries(stream.headers));
    } finally {
      abort.abort();
    }
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expectSecurityHeaders('console over the socket', Object.fromEntries(page.headers));
  });
});
