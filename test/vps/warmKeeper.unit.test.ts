import { describe, expect, it } from 'vitest';
import type { VpsEvent } from '../../schemas/vps/events.ts';
import { VpsModel } from '../../services/processes/vpsReconciler/model.ts';
import { planWarmPool, slotIdOf } from '../../services/processes/vpsReconciler/warmKeeper.ts';

const T0 = Date.parse('2026-12-06T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const SMALL = { vcpus: 2, memoryMib: 2_048, diskGib: 20 };
const policy = { allowUnverifiedRelease: false, provisioningCidrs: [] };

function modelWith(count: number, slots: readonly { slotId: string; placedAt: number; ready?: boolean }[]): VpsModel {
  const model = new VpsModel();
  const events: VpsEvent[] = [
    { type: 'PoolCreated', data: { poolId: 'p1', class: 'metal', agent: 'bcd', accountId: null, siteId: 'dc1', policy, runtime: 'crun' } },
    {
      type: 'PoolWarmSet',
      data: { poolId: 'p1', flavors: [{ flavorId: 'small', image: 'img', count, resources: SMALL }], maxSlotAgeSeconds: 3_600, setAt: iso(T0) },
    },
  ];
  for (const s of slots) {
    const placed = { siteId: 'dc1', slotId: s.slotId, poolId: 'p1', flavorId: 'small', image: 'img', runtime: 'crun', nodeId: 'n1' };
    events.push({ type: 'WarmSlotPlaced', data: { ...placed, resources: SMALL, freeBefore: SMALL, considered: 1, placedAt: iso(s.placedAt) } });
    if (s.ready) events.push({ type: 'WarmSlotReady', data: { siteId: 'dc1', slotId: s.slotId, nodeId: 'n1', readyAt: iso(s.placedAt) } });
  }
  events.forEach((e, i) => model.apply(e, i + 1));
  return model;
}
const kinds = (effects: ReturnType<typeof planWarmPool>) =>
  effects.map((e) =>
    e.kind === 'command'
      ? `${e.name}:${(e.payload as { slotId: string; reason?: string }).slotId}${(e.payload as { reason?: string }).reason ? `:${(e.payload as { reason: string }).reason}` : ''}`
      : e.kind === 'task'
        ? `${e.task.step}:${e.task.slotId}`
        : e.kind,
  );

describe('the warm-pool keeper', () => {
  it('places the slots short of the count, each with the id of its ordinal, and reads the nodes once', () => {
    let reads = 0;
    const effects = planWarmPool('p1', modelWith(2, []), T0, 2_000, () => (reads++, []));
    expect(kinds(effects)).toEqual([`vps.placeWarmSlot:${slotIdOf('p1', 'small', 'img', 0)}`, `vps.placeWarmSlot:${slotIdOf('p1', 'small', 'img', 1)}`]);
    expect(reads).toBe(1);
  });

  it('prepares a slot not yet ready, marks one its node reports stopped ready, reaps surplus (not ready, newest first) and expired ones', () => {
    const model = modelWith(1, [
      { slotId: 'old', placedAt: T0 - 7_200_000, ready: true },
      { slotId: 'a', placedAt: T0 - 1_000, ready: true },
      { slotId: 'b', placedAt: T0 - 500 },
      { slotId: 'c', placedAt: T0 - 100 },
    ]);
    model.hosts.heard({
      nodeId: 'n1',
      at: T0,
      instances: [{ id: 'c', runtime: 'crun', desiredState: 'stopped', state: 'stopped', addresses: [], warm: true }],
    });
    const effects = kinds(planWarmPool('p1', model, T0, 2_000, () => []));
    expect(effects).toEqual(['vps.reapWarmSlot:old:EXPIRED', 'vps.reapWarmSlot:c:SURPLUS', 'vps.reapWarmSlot:b:SURPLUS']);
    const kept = modelWith(3, [
      { slotId: 'a', placedAt: T0 - 1_000, ready: true },
      { slotId: 'b', placedAt: T0 - 500 },
      { slotId: 'c', placedAt: T0 - 100 },
    ]);
    kept.hosts.heard({ nodeId: 'n1', at: T0, instances: [{ id: 'c', runtime: 'crun', desiredState: 'stopped', state: 'stopped', addresses: [], warm: true }] });
    expect(kinds(planWarmPool('p1', kept, T0, 2_000, () => []))).toEqual(['prepareSlot:b', 'vps.markWarmSlotReady:c']);
  });

  it('reaps a slot its node reports in error and places its replacement', () => {
    const model = modelWith(1, [{ slotId: 'a', placedAt: T0 - 1_000, ready: true }]);
    model.hosts.heard({ nodeId: 'n1', at: T0, instances: [{ id: 'a', runtime: 'crun', desiredState: 'stopped', state: 'error', addresses: [], warm: true }] });
    expect(kinds(planWarmPool('p1', model, T0, 2_000, () => []))).toEqual([
      'vps.reapWarmSlot:a:FAILED',
      `vps.placeWarmSlot:${slotIdOf('p1', 'small', 'img', 1)}`,
    ]);
  });
});
