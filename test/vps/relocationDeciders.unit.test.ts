import { describe, expect, it } from 'vitest';
import type { HoldBookEvent } from '../../schemas/vps/events.ts';
import type { HoldCandidate } from '../../schemas/vps/holdCommands.ts';
import type { PoolState } from '../../schemas/vps/poolState.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { relocateInstance } from '../../services/vps/hold/relocateInstance.ts';
import { requestRelocation } from '../../services/vps/hold/requestRelocation.ts';
import { allocatedByNode } from '../../services/vps/placement/bookSnapshot.ts';
import { thrownCode } from '../support/thrownCode.ts';

const T0 = '2026-12-07T09:00:00.000Z';
const size = { vcpus: 4, memoryMib: 4_096, diskGib: 40 };
const pool: PoolState = {
  exists: true,
  poolId: 'metal-a',
  class: 'metal',
  agent: 'bcd',
  accountId: null,
  siteId: 'dc1',
  runtime: 'process-runtime',
  policy: { allowUnverifiedRelease: false, provisioningCidrs: [] },
  offeredTo: [],
};
const node = (nodeId: string, vcpus: number, over: Partial<HoldCandidate> = {}): HoldCandidate => ({
  nodeId,
  labels: { 'bc.dev/driver.process-runtime': '1.0.0' },
  capacity: { vcpus, memoryMib: 32_768, diskGib: 500 },
  allocated: { vcpus: 0, memoryMib: 0, diskGib: 0 },
  schedulable: true,
  agentless: false,
  ...over,
});
const placed = (instanceId: string, nodeId: string, tenantId = 't1'): HoldBookEvent => ({
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
    fromHolds: [],
    considered: 3,
    placedAt: T0,
  },
});
const fold = (events: readonly HoldBookEvent[]) => events.reduce((s, e) => holdBookAggregate.evolve(s, e), holdBookAggregate.initialState);
const ctx = { commandId: 'cmd-00000001', actor: 'test', now: T0 };
const request = (over: Record<string, unknown> = {}) => ({
  siteId: 'dc1',
  tenantId: 't1',
  instanceId: 'vm-1',
  fromNodeId: 'n1',
  reason: "node n1's bcd node silent for 200 s",
  ...over,
});
const relocate = (candidates: HoldCandidate[], tenantId = 't1') => ({ siteId: 'dc1', tenantId, instanceId: 'vm-1', candidates });
const asked = fold([placed('vm-1', 'n1'), ...requestRelocation.decide(request(), fold([placed('vm-1', 'n1')]), { ...ctx, dependencies: undefined })]);

describe('vps.requestRelocation', () => {
  it('records that the instance leaves its lost node, once; a stale or repeated request changes nothing', () => {
    const state = fold([placed('vm-1', 'n1')]);
    expect(requestRelocation.decide(request(), state, { ...ctx, dependencies: undefined })).toEqual([
      { type: 'InstanceRelocationRequested', data: { ...request(), requestedAt: T0 } },
    ]);
    expect(asked.instances?.['vm-1']?.relocation).toEqual({ fromNodeId: 'n1', reason: request().reason });
    // Asked again; the instance is on another node already; it is not placed at all.
    expect(requestRelocation.decide(request(), asked, { ...ctx, dependencies: undefined })).toEqual([]);
    expect(requestRelocation.decide(request({ fromNodeId: 'n2' }), state, { ...ctx, dependencies: undefined })).toEqual([]);
    expect(requestRelocation.decide(request({ instanceId: 'vm-9' }), state, { ...ctx, dependencies: undefined })).toEqual([]);
    // Another tenant's instance is not found.
    expect(thrownCode(() => requestRelocation.decide(request({ tenantId: 't2' }), state, { ...ctx, dependencies: undefined }))).toBe('NOT_FOUND');
  });
});

describe('vps.relocateInstance', () => {
  it('places the instance on another node by the placement rules, never the one it leaves, and moves its capacity in one event', () => {
    // n1 is the tightest fit, but it is the node being left, whatever the sender says of it.
    const events = relocateInstance.decide(relocate([node('n1', 8), node('n2', 16), node('n3', 12, { labels: {} })]), asked, {
      ...ctx,
      dependencies: { pool },
    });
    expect(events).toEqual([
      {
        type: 'InstanceRelocated',
        data: {
          siteId: 'dc1',
          instanceId: 'vm-1',
          tenantId: 't1',
          poolId: 'metal-a',
          runtime: 'process-runtime',
          fromNodeId: 'n1',
          nodeId: 'n2',
          reason: request().reason,
          resources: size,
          freeBefore: { vcpus: 16, memoryMib: 32_768, diskGib: 500 },
          fromHolds: [],
          considered: 3,
          relocatedAt: T0,
        },
      },
    ]);
    const after = fold([placed('vm-1', 'n1'), { type: 'InstanceRelocationRequested', data: { ...request(), requestedAt: T0 } }, ...events]);
    expect(after.instances?.['vm-1']).toMatchObject({ nodeId: 'n2', resources: size });
    expect(after.instances?.['vm-1']?.relocation).toBeUndefined();
    expect(allocatedByNode(after)).toEqual(new Map([['n2', size]]));
    // Done: relocating again is a no-op.
    expect(relocateInstance.decide(relocate([node('n2', 16)]), after, { ...ctx, dependencies: { pool } })).toEqual([]);
  });

  it('counts what the other instances take, and refuses with each node named when none fits; the request stands', () => {
    const full = fold([
      placed('vm-2', 'n2'),
      placed('vm-3', 'n2'),
      ...[placed('vm-1', 'n1')],
      { type: 'InstanceRelocationRequested', data: { ...request(), requestedAt: T0 } },
    ]);
    const candidates = [node('n1', 8), node('n2', 10), node('n3', 16, { schedulable: false })];
    let refusal: { code?: string; issues?: unknown } = {};
    try {
      relocateInstance.decide(relocate(candidates), full, { ...ctx, dependencies: { pool } });
    } catch (err) {
      refusal = err as typeof refusal;
    }
    expect(refusal.code).toBe('NO_CAPACITY');
    expect(refusal.issues).toEqual([
      { path: 'n1', message: 'NOT_SCHEDULABLE' },
      { path: 'n2', message: 'INSUFFICIENT_CAPACITY (short of vcpus)' },
      { path: 'n3', message: 'NOT_SCHEDULABLE' },
    ]);
    expect(full.instances?.['vm-1']?.relocation?.fromNodeId).toBe('n1');
  });

  it('refuses another tenant (NOT_FOUND) and a pool that runs no instances (PRECONDITION_FAILED); nothing asked is a no-op', () => {
    expect(thrownCode(() => relocateInstance.decide(relocate([node('n2', 16)], 't2'), asked, { ...ctx, dependencies: { pool } }))).toBe('NOT_FOUND');
    const { runtime: _none, ...noRuntime } = pool as PoolState & { runtime: string };
    expect(thrownCode(() => relocateInstance.decide(relocate([node('n2', 16)]), asked, { ...ctx, dependencies: { pool: noRuntime } }))).toBe(
      'PRECONDITION_FAILED',
    );
    expect(relocateInstance.decide(relocate([node('n2', 16)]), fold([placed('vm-1', 'n1')]), { ...ctx, dependencies: { pool } })).toEqual([]);
  });
});
