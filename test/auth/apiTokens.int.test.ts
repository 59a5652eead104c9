import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adminTokenFile } from '../../services/auth/bootstrap.ts';
import { startApi } from '../support/apiFixture.ts';
import { sqliteDumps, streamMessages } from '../support/plaintextScan.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('API tokens', () => {
  it('authenticate every /v1 route, record the token as actor, enforce roles, and never store the token', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app } = env;
    expect(statSync(adminTokenFile(env.dataDir)).mode & 0o777).toBe(0o600);

    const create = async (body: object, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url: '/v1/tokens', payload: body, headers });
    const viewer = (await create({ tokenId: 'v1', role: 'viewer' })).json();
    const operator = (await create({ tokenId: 'op1', role: 'operator', description: 'ops' })).json();
    const expired = (await create({ tokenId: 'old', role: 'operator', expiresAt: new Date(Date.now() - 1_000).toISOString() })).json();
    expect(viewer).toMatchObject({ tokenId: 'v1', role: 'viewer', token: expect.stringMatching(/^bct_v1_[A-Za-z0-9_-]{43}$/) });
    expect((await create({ tokenId: 't1', role: 'tenant' })).json()).toMatchObject({ code: 'VALIDATION_FAILED' });

    // 401: none, garbage, a wrong secret for a real id, expired.
    const unauthenticated = [
      { authorization: '' },
      bearer('nonsense'),
      bearer(viewer.token.slice(0, -4) + 'AAAA'),
      bearer(expired.token),
      { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    ];
    for (const headers of unauthenticated) {
      const res = await app.inject({ url: '/v1/nodes', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('UNAUTHENTICATED');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    for (const url of ['/healthz', '/readyz', '/metrics', '/v1/openapi.json'])
      expect((await app.inject({ url, headers: { authorization: '' } })).statusCode).toBe(200);

    // Roles: a viewer reads but sends nothing; only admins manage tokens.
    expect((await app.inject({ url: '/v1/sites', headers: bearer(viewer.token) })).statusCode).toBe(200);
    const viewerCommand = await app.inject({
      method: 'POST',
      url: '/v1/commands/site.create',
      payload: { siteId: 'dc1', name: 'x' },
      headers: bearer(viewer.token),
    });
    expect([viewerCommand.statusCode, viewerCommand.json().code]).toEqual([403, 'FORBIDDEN']);
    expect((await create({ role: 'admin' }, bearer(operator.token))).json().code).toBe('FORBIDDEN');
    expect((await app.inject({ url: '/v1/tokens', headers: bearer(operator.token) })).json().code).toBe('FORBIDDEN');

    const created = await app.inject({
      method: 'POST',
      url: '/v1/commands/site.create',
      payload: { siteId: 'dc1', name: 'DC 1' },
      headers: bearer(operator.token),
    });
    expect(created.statusCode).toBe(201);
    const history = (await app.inject({ url: '/v1/events?aggregate=site.site/dc1' })).json();
    expect(history.items[0].metadata.actor).toBe('token:op1');
    const tokenHistory = (await app.inject({ url: '/v1/events?aggregate=auth.token/op1' })).json();
    expect(tokenHistory.items[0]).toMatchObject({ type: 'ApiTokenCreated', metadata: { actor: 'token:bootstrap-admin' } });

    // Revocation: refused from then on.
    const revoked = await app.inject({ method: 'DELETE', url: '/v1/tokens/op1' });
    expect(revoked.json()).toMatchObject({ tokenId: 'op1', revoked: true });
    await env.readers.get('tokens')!.waitFor(revoked.json().seq, 5_000);
    expect((await app.inject({ url: '/v1/nodes', headers: bearer(operator.token) })).json().code).toBe('UNAUTHENTICATED');
    const listed = (await app.inject({ url: `/v1/tokens?minSeq=${revoked.json().seq}` })).json();
    expect(listed.items.map((t: { tokenId: string; revoked: boolean }) => [t.tokenId, t.revoked])).toEqual([
      ['bootstrap-admin', false],
      ['old', false],
      ['op1', true],
      ['v1', false],
    ]);
    expect((await create({ tokenId: 'op1', role: 'operator' })).json().code).toBe('ALREADY_EXISTS');

    // The bearer tokens exist only in the answers above: not in the log, not in any read model.
    const secrets = [viewer.token, operator.token, expired.token].map((t: string) => t.slice(-43));
    const stored = [...(await streamMessages(env.nc, 'BC_EVENTS')).map((m) => m.text), ...sqliteDumps(join(env.dataDir, 'readmodels')).map((d) => d.text)].join(
      '\n',
    );
    for (const secret of secrets) expect(stored).not.toContain(secret);
    expect(stored).toContain('ApiTokenCreated');
  });

  it('rate-limits per token with 429 RATE_LIMITED, and keeps the body size limit', { timeout: 60_000 }, async () => {
    await using env = await startApi({ config: { apiRateLimitPerMinute: 5 } });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await env.app.inject({ url: '/v1/sites' })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const limited = await env.app.inject({ url: '/v1/sites' });
    expect(limited.json().code).toBe('RATE_LIMITED');
    expect(limited.headers['retry-after']).toBeDefined();
    // Probes are not limited; another client (here: no token, counted by address) has its own budget.
    expect((await env.app.inject({ url: '/readyz' })).statusCode).toBe(200);
    expect((await env.app.inject({ url: '/v1/sites', headers: { authorization: '' } })).json().code).toBe('UNAUTHENTICATED');
  });

  it('refuses an oversize body with BODY_TOO_LARGE before anything is appended', async () => {
    await using env = await startApi({ config: { bodyLimitBytes: 1_024 } });
    const before = await env.store.streamLastSequence();
    const res = await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc9', name: 'x'.repeat(2_000) } });
    expect([res.statusCode, res.json().code]).toEqual([413, 'BODY_TOO_LARGE']);
    expect(await env.store.streamLastSequence()).toBe(before);
  });
});
