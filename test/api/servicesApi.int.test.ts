import { describe, expect, it } from 'vitest';
import { COMMAND_PARTITIONS } from '../../schemas/commandPartitions.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { LeaderLease } from '../../services/platform/lease/leaderLease.ts';
import { startApi } from '../support/apiFixture.ts';

describe('GET /v1/services', () => {
  it('shows who leads each leased service, under which term, in the API, /readyz and the OpenAPI document', async () => {
    await using env = await startApi();
    const empty = await env.app.inject({ method: 'GET', url: '/v1/services' });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ leaders: [], commandResponders: [] });

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
    expect((await env.app.inject({ method: 'GET', url: '/v1/services' })).json()).toEqual({ leaders: [], commandResponders: [] });
  });

  it('shows the commands replicas and the command partitions each owns, and forgets one that says it is leaving', async () => {
    await using env = await startApi();
    const services = async () => (await env.app.inject({ method: 'GET', url: '/v1/services' })).json();
    const a = serveCommands(env.nc, env.bus, env.log);
    const b = serveCommands(env.nc, env.bus, env.log);
    const ids = [a.partitions!.responderId, b.partitions!.responderId].sort();
    // The API hears each replica at its start and at its next beat.
    await expect.poll(async () => (await services()).commandResponders.map((r: { responderId: string }) => r.responderId), { timeout: 5_000 }).toEqual(ids);
    const { commandResponders } = await services();
    for (const responder of commandResponders) {
      const own = [a, b].find((r) => r.partitions!.responderId === responder.responderId)!;
      expect(responder.partitions).toEqual(own.partitions!.owned());
    }
    expect(commandResponders.flatMap((r: { partitions: number[] }) => r.partitions)).toHaveLength(COMMAND_PARTITIONS);
    b.unsubscribe();
    await expect
      .poll(async () => (await services()).commandResponders, { timeout: 5_000 })
      .toEqual([{ responderId: a.partitions!.responderId, partitions: Array.from({ length: COMMAND_PARTITIONS }, (_, p) => p) }]);
    a.unsubscribe();
  });
});
