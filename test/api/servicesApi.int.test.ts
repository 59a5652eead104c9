import { describe, expect, it } from 'vitest';
import { LeaderLease } from '../../services/platform/lease/leaderLease.ts';
import { startApi } from '../support/apiFixture.ts';

describe('GET /v1/services', () => {
  it('shows who leads each leased service, under which term, in the API, /readyz and the OpenAPI document', async () => {
    await using env = await startApi();
    const empty = await env.app.inject({ method: 'GET', url: '/v1/services' });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ leaders: [] });

    const lease = new LeaderLease(env.nc, { service: 'bmc-monitor', leaseMs: 5_000, holder: 'host-a:42:cafe' }, env.log);
    let term = 0;
    lease.run(
      async (t) => ((term = t.term), { stop: async () => undefined }),
      () => undefined,
    );
    for (let i = 0; term === 0; i++) {
      if (i > 100) throw new Error('no lease');
      await new Promise((r) => setTimeout(r, 20));
    }
    const res = (await env.app.inject({ method: 'GET', url: '/v1/services' })).json();
    expect(res.leaders).toMatchObject([{ service: 'bmc-monitor', holder: 'host-a:42:cafe', term, leaseMs: 5_000, stale: false }]);
    // /readyz caches the leases for a second.
    await new Promise((r) => setTimeout(r, 1_100));
    const ready = (await env.app.inject({ method: 'GET', url: '/readyz', headers: { authorization: '' } })).json();
    expect(ready.leaders).toMatchObject([{ service: 'bmc-monitor', holder: 'host-a:42:cafe', term }]);
    const doc = (await env.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toContain('/v1/services');
    expect(Object.keys(doc.paths['/v1/services'])).toEqual(['get']);
    await lease.stop();
    expect((await env.app.inject({ method: 'GET', url: '/v1/services' })).json()).toEqual({ leaders: [] });
  });
});
