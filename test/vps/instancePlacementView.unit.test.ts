import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { vpsProjection } from '../../projections/vps/projector.ts';
import { instanceById, listInstances, listPools } from '../../projections/vps/queries.ts';
import { vpsRoutes } from '../../projections/vps/routes.ts';
import type { ReadModelReader } from '../../projections/runtime/readModelReader.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { VpsEvent } from '../../schemas/vps/events.ts';

const size = { vcpus: 2, memoryMib: 2_048, diskGib: 20 };
const requested = (tenantId: string, instanceId: string): VpsEvent => ({
  type: 'InstanceRequested',
  data: {
    tenantId,
    instanceId,
    poolId: 'metal-a',
    flavorId: 'small',
    image: 'debian-12',
    sshKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB view-test'],
    userData: null,
    resources: { instances: 1, ...size },
    requestedAt: '2026-12-07T05:00:00.000Z',
  },
});
const placed = (tenantId: string, instanceId: string, nodeId: string): VpsEvent => ({
  type: 'InstancePlaced',
  data: {
    siteId: 'dc1',
    instanceId,
    tenantId,
    poolId: 'metal-a',
    runtime: 'process-runtime',
    nodeId,
    resources: size,
    freeBefore: { vcpus: 8, memoryMib: 32_768, diskGib: 500 },
    fromHolds: [{ holdId: 'h1', resources: size }],
    considered: 2,
    placedAt: '2026-12-07T05:00:01.000Z',
  },
});
const unplaced = (tenantId: string, instanceId: string, nodeId: string): VpsEvent => ({
  type: 'InstanceUnplaced',
  data: { siteId: 'dc1', instanceId, tenantId, nodeId, unplacedAt: '2026-12-07T05:00:09.000Z' },
});

function dbAfter(events: readonly VpsEvent[]) {
  const db = new Database(':memory:');
  for (const m of vpsProjection.migrations) db.exec(m);
  events.forEach((e, i) => vpsProjection.apply(db, e, { time: `2026-12-07T05:00:0${i}.000Z` } as EventMetadata, { seq: i + 1, subject: 'bc.evt.vps.x.y' }));
  return db;
}

const pool: VpsEvent = {
  type: 'PoolCreated',
  data: {
    poolId: 'metal-a',
    class: 'metal',
    agent: 'bcd',
    accountId: null,
    siteId: 'dc1',
    policy: { allowUnverifiedRelease: false, provisioningCidrs: [] },
    runtime: 'process-runtime',
  },
};

describe('vps read model placements', () => {
  it("shows the node an instance is placed on with the decision's why, only on that tenant's instance, and none once unplaced", () => {
    const db = dbAfter([
      pool,
      requested('t1', 'vm-1'),
      requested('t2', 'vm-1'),
      requested('t1', 'vm-2'),
      placed('t1', 'vm-1', 'n1'),
      placed('t1', 'vm-2', 'n2'),
    ]);
    expect(instanceById(db, 'vm-1', 't1')?.placement).toEqual({
      siteId: 'dc1',
      nodeId: 'n1',
      runtime: 'process-runtime',
      resources: size,
      freeBefore: { vcpus: 8, memoryMib: 32_768, diskGib: 500 },
      fromHolds: [{ holdId: 'h1', resources: size }],
      considered: 2,
      placedAt: '2026-12-07T05:00:01.000Z',
    });
    expect(instanceById(db, 'vm-1', 't2')?.placement).toBeNull();
    expect(listPools(db)[0]).toMatchObject({ poolId: 'metal-a', runtime: 'process-runtime' });

    vpsProjection.apply(db, unplaced('t1', 'vm-1', 'n1'), { time: '2026-12-07T05:00:09.000Z' } as EventMetadata, {
      seq: 7,
      subject: 'bc.evt.vps.holdBook.dc1',
    });
    expect(listInstances(db, { tenantId: 't1' }).map((i) => [i.instanceId, i.placement?.nodeId ?? null])).toEqual([
      ['vm-1', null],
      ['vm-2', 'n2'],
    ]);
  });

  it('serves the placement on GET /v1/vps/instances and /v1/vps/instances/:id', async () => {
    const db = dbAfter([pool, requested('t1', 'vm-1'), placed('t1', 'vm-1', 'n1')]);
    const reader = { db: () => db, waitFor: async () => undefined } as unknown as ReadModelReader;
    const app = Fastify().setValidatorCompiler(validatorCompiler).setSerializerCompiler(serializerCompiler);
    await app.register(vpsRoutes, { reader, waitTimeoutMs: 1_000 });
    try {
      const one = await app.inject({ url: '/v1/vps/instances/vm-1' });
      expect(one.statusCode).toBe(200);
      expect(one.json()).toMatchObject({ instanceId: 'vm-1', placement: { nodeId: 'n1', considered: 2, fromHolds: [{ holdId: 'h1' }] } });
      const all = await app.inject({ url: '/v1/vps/instances?poolId=metal-a' });
      expect(all.json<{ items: { placement: { nodeId: string } | null }[] }>().items.map((i) => i.placement?.nodeId)).toEqual(['n1']);
    } finally {
      await app.close();
    }
  });
});
