import { describe, expect, it } from 'vitest';
import { driverLabelKey, warmStartLabelKey } from '../../schemas/metal/nodeLabels.ts';
import type { HoldBookEvent } from '../../schemas/vps/events.ts';
import type { HoldCandidate } from '../../schemas/vps/holdCommands.ts';
import type { HoldBookState } from '../../schemas/vps/holdState.ts';
import type { FlavorState } from '../../schemas/vps/flavorState.ts';
import type { PoolState } from '../../schemas/vps/poolState.ts';
import type { InstanceReservation } from '../../schemas/vps/tenantState.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { placeInstance } from '../../services/vps/hold/placeInstance.ts';
import { markWarmSlotReady, placeWarmSlot, reapWarmSlot } from '../../services/vps/hold/warmSlots.ts';
import { allocatedByNode } from '../../services/vps/placement/bookSnapshot.ts';
import { setWarmPool } from '../../services/vps/pool/setWarm.ts';
import { thrownCode } from '../support/thrownCode.ts';

const T0 = '2026-12-06T12:00:00.000Z';
const SMALL = { vcpus: 2, memoryMib: 2_048, diskGib: 20 };
const warm = { flavors: [{ flavorId: 'small', image: 'img', count: 2, resources: SMALL }], maxSlotAgeSeconds: 86_400 };
const pool: PoolState = {
  exists: true,
  poolId: 'p1',
  class: 'metal',
  agent: 'bcd',
  accountId: null,
  siteId: 'dc1',
  runtime: 'crun',
  policy: { allowUnverifiedRelease: false, provisioningCidrs: [] },
  offeredTo: ['t1'],
  warm,
};
const node = (nodeId: string, warmStart: boolean, vcpus = 16): HoldCandidate => ({
  nodeId,
  labels: { [driverLabelKey('crun')]: '1.0', ...(warmStart ? { [warmStartLabelKey('crun')]: 'true' } : {}) },
  capacity: { vcpus, memoryMib: 65_536, diskGib: 500 },
  allocated: { vcpus: 0, memoryMib: 0, diskGib: 0 },
  schedulable: true,
  agentless: false,
});
const candidates = [node('cold-big', false, 64), node('warm-a', true)];
const ctx = <D>(dependencies: D, now = T0) => ({ commandId: 'cmd-00000001', actor: 'test', now, dependencies });
const fold = (events: readonly HoldBookEvent[], from: HoldBookState = holdBookAggregate.initialState) => events.reduce(holdBookAggregate.evolve, from);
const placeSlot = (state: HoldBookState, slotId: string) =>
  placeWarmSlot.decide({ siteId: 'dc1', poolId: 'p1', slotId, flavorId: 'small', image: 'img', candidates }, state, ctx({ pool }));
const reservation = (image = 'img'): InstanceReservation => ({
  poolId: 'p1',
  flavorId: 'small',
  image,
  sshKeys: [],
  userData: null,
  resources: { instances: 1, ...SMALL },
  status: 'reserved',
});
const place = (state: HoldBookState, instanceId: string, image = 'img') =>
  placeInstance.decide({ siteId: 'dc1', tenantId: 't1', instanceId, candidates }, state, ctx({ reservation: reservation(image), pool }));

describe('vps.setWarmPool', () => {
  const flavor: FlavorState = { exists: true, flavorId: 'small', ...SMALL, offers: { p1: 'hw-small' } };
  const command = { poolId: 'p1', flavors: [{ flavorId: 'small', image: 'img', count: 2 }], maxSlotAgeSeconds: 86_400 };
  const { warm: _none, ...bare } = pool;

  it('fixes each flavor size in PoolWarmSet, and the same setting again appends nothing', () => {
    const [event] = setWarmPool.decide(command, bare, ctx({ flavors: new Map([['small', flavor]]) }));
    expect(event).toMatchObject({ type: 'PoolWarmSet', data: { poolId: 'p1', ...warm } });
    expect(setWarmPool.decide(command, pool, ctx({ flavors: new Map([['small', flavor]]) }))).toEqual([]);
  });

  it('refuses a flavor not sold in the pool, and a pool without a runtime', () => {
    const unsold: FlavorState = { ...flavor, offers: {} };
    expect(thrownCode(() => setWarmPool.decide(command, bare, ctx({ flavors: new Map([['small', unsold]]) })))).toBe('PRECONDITION_FAILED');
    const { runtime: _r, ...noRuntime } = bare;
    expect(thrownCode(() => setWarmPool.decide(command, noRuntime, ctx({ flavors: new Map([['small', flavor]]) })))).toBe('PRECONDITION_FAILED');
  });
});

describe('warm slots on the site book', () => {
  it('places a slot only on a node whose runtime declares warm-start, counted taken there, and no more than the pool keeps', () => {
    const one = fold(placeSlot(holdBookAggregate.initialState, 's1'));
    expect(one.warmSlots?.s1).toMatchObject({ nodeId: 'warm-a', readyAt: null, resources: SMALL });
    expect(allocatedByNode(one).get('warm-a')).toEqual(SMALL);
    expect(placeSlot(one, 's1')).toEqual([]);
    const two = fold(placeSlot(one, 's2'), one);
    expect(placeSlot(two, 's3')).toEqual([]);
  });

  it('refuses NO_CAPACITY when no warm-start node has room', () => {
    const full = [node('cold-big', false, 64), node('warm-a', true, 1)];
    const command = { siteId: 'dc1', poolId: 'p1', slotId: 's1', flavorId: 'small', image: 'img', candidates: full };
    expect(thrownCode(() => placeWarmSlot.decide(command, holdBookAggregate.initialState, ctx({ pool })))).toBe('NO_CAPACITY');
  });

  it('a create takes a ready slot of its image (the event names it), never one still being prepared', () => {
    const placed = fold(placeSlot(holdBookAggregate.initialState, 's1'));
    const cold = place(placed, 'vm-1');
    expect(cold[0]).toMatchObject({ type: 'InstancePlaced', data: { nodeId: 'warm-a' } });
    expect((cold[0]!.data as { warmSlot?: unknown }).warmSlot).toBeUndefined();
    const ready = fold(markWarmSlotReady.decide({ siteId: 'dc1', slotId: 's1' }, placed, ctx(undefined)), placed);
    expect(markWarmSlotReady.decide({ siteId: 'dc1', slotId: 's1' }, ready, ctx(undefined))).toEqual([]);
    expect((place(ready, 'vm-2', 'other-img')[0]!.data as { warmSlot?: unknown }).warmSlot).toBeUndefined();
    const taken = place(ready, 'vm-1');
    expect(taken[0]).toMatchObject({ type: 'InstancePlaced', data: { nodeId: 'warm-a', warmSlot: { slotId: 's1', readyAt: T0 }, considered: 1 } });
    // The slot's capacity became the instance's: counted once.
    const after = fold(taken, ready);
    expect(after.warmSlots?.s1).toBeUndefined();
    expect(allocatedByNode(after).get('warm-a')).toEqual(SMALL);
  });

  it('a reaped slot frees its capacity; reaping it again appends nothing', () => {
    const placed = fold(placeSlot(holdBookAggregate.initialState, 's1'));
    const reaped = reapWarmSlot.decide({ siteId: 'dc1', slotId: 's1', reason: 'EXPIRED' }, placed, ctx(undefined));
    expect(reaped[0]).toMatchObject({ type: 'WarmSlotReaped', data: { slotId: 's1', nodeId: 'warm-a', reason: 'EXPIRED' } });
    const after = fold(reaped, placed);
    expect(allocatedByNode(after).get('warm-a')).toBeUndefined();
    expect(reapWarmSlot.decide({ siteId: 'dc1', slotId: 's1', reason: 'EXPIRED' }, after, ctx(undefined))).toEqual([]);
  });
});
