import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';

const enrollBody = {
  nodeId: 'n1',
  siteId: 'dc1',
  bmc: { address: 'https://127.0.0.1:8443', credentialsRef: 'secret:bmc-1' },
  hardwareProfile: 'default',
  macs: ['52:54:00:aa:bb:01'],
};

describe('HTTP command API', () => {
  it('accepts commands, then serves the read model with read-your-writes', async () => {
    await using env = await startApi();
    const site = await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc1', name: 'DC 1' } });
    expect(site.statusCode).toBe(201);
    const res = await env.app.inject({
      method: 'POST',
      url: '/v1/commands/metal.enroll',
      payload: enrollBody,
      headers: { 'idempotency-key': 'enroll-n1-abc' },
    });
    expect(res.statusCode).toBe(201);
    const result = res.json();
    // The command id is derived from the caller and its key: keys are per caller.
    expect(result).toMatchObject({ commandId: expect.stringMatching(/^idem-/), duplicate: false, events: [{ type: 'NodeEnrolled', version: 1 }] });
    const node = await env.app.inject({ method: 'GET', url: `/v1/nodes/n1?minSeq=${result.seq}` });
    expect(node.statusCode).toBe(200);
    expect(node.json()).toMatchObject({ nodeId: 'n1', state: 'enrolled', siteId: 'dc1' });
    const again = await env.app.inject({
      method: 'POST',
      url: '/v1/commands/metal.enroll',
      payload: enrollBody,
      headers: { 'idempotency-key': 'enroll-n1-abc' },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ seq: result.seq, duplicate: true });
    const history = await env.app.inject({ method: 'GET', url: '/v1/events?aggregate=metal.node/n1' });
    expect(history.json().items.map((e: { type: string }) => e.type)).toEqual(['NodeEnrolled']);
  });

  it.each([
    ['malformed JSON', { payload: '{"siteId": ', headers: { 'content-type': 'application/json' } }, 400, 'MALFORMED_JSON'],
    ['unknown field', { payload: { siteId: 'dc2', name: 'x', extra: 1 } }, 400, 'VALIDATION_FAILED'],
    ['wrong type', { payload: { siteId: 'dc2', name: 42 } }, 400, 'VALIDATION_FAILED'],
    ['bad id', { payload: { siteId: 'DC.2', name: 'x' } }, 400, 'VALIDATION_FAILED'],
    ['wrong media type', { payload: 'siteId=dc2', headers: { 'content-type': 'text/plain' } }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ] as const)('refuses %s with a stable code and appends nothing', async (_name, request, status, code) => {
    await using env = await startApi();
    const before = await env.store.streamLastSequence();
    const res = await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', ...request } as never);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status, code });
    expect(await env.store.streamLastSequence()).toBe(before);
  });

  it('refuses an oversize body with BODY_TOO_LARGE and appends nothing', async () => {
    await using env = await startApi();
    const before = await env.store.streamLastSequence();
    const res = await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc2', name: 'x'.repeat(2_000_000) } });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('BODY_TOO_LARGE');
    expect(await env.store.streamLastSequence()).toBe(before);
  });

  it('refuses an unknown command with UNKNOWN_COMMAND', async () => {
    await using env = await startApi();
    const res = await env.app.inject({ method: 'POST', url: '/v1/commands/metal.explode', payload: {} });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('UNKNOWN_COMMAND');
  });

  it('answers a domain refusal with 409 and its code', async () => {
    await using env = await startApi();
    await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc1', name: 'DC 1' } });
    const dup = await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc1', name: 'DC 1' } });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().code).toBe('ALREADY_EXISTS');
  });

  it('serves the OpenAPI document with every command', async () => {
    await using env = await startApi();
    const doc = (await env.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/commands/site.create', '/v1/commands/metal.enroll', '/v1/nodes', '/v1/nodes/{nodeId}']),
    );
    expect(doc.paths['/v1/commands/metal.enroll'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('macs');
  });

  it('reports readiness and metrics', async () => {
    await using env = await startApi();
    await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc1', name: 'DC 1' } });
    const ready = await env.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    // The test's nats-server is anonymous (BC_NATS_AUTH=none): ready, and saying what it runs without.
    expect(ready.json().warnings).toEqual([expect.objectContaining({ code: 'BROKER_AUTH_OFF' })]);
    const metrics = await env.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('bc_commands_total{command="site.create",outcome="OK"} 1');
    expect(metrics.body).toContain('bc_projector_lag{projection="nodes"}');
  });

  it('names each insecure mode on /readyz with a stable code, and none when broker and API auth are on', async () => {
    await using insecure = await startApi({ config: { apiAuth: 'off' } });
    expect((await insecure.app.inject({ url: '/readyz' })).json().warnings.map((w: { code: string }) => w.code)).toEqual(['BROKER_AUTH_OFF', 'API_AUTH_OFF']);
    await using secure = await startApi({ config: { natsAuth: 'operator' } });
    expect((await secure.app.inject({ url: '/readyz' })).json().warnings).toEqual([]);
  });

  it('answers 503 UNAVAILABLE with Retry-After while NATS is away, and serves again once it is back', async () => {
    await using env = await startApi();
    await env.nats.kill();
    const down = await env.app.inject({ method: 'GET', url: '/v1/events?aggregate=site.site/dc1' });
    expect(down.statusCode).toBe(503);
    expect(down.headers['retry-after']).toBe('1');
    expect(down.json()).toMatchObject({ code: 'UNAVAILABLE' });
    await env.nats.restart();
    await expect
      .poll(async () => (await env.app.inject({ method: 'GET', url: '/v1/events?aggregate=site.site/dc1' })).statusCode, { timeout: 15_000 })
      .toBe(200);
  });
});
