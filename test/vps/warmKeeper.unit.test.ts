import { describe, expect, it } from 'vitest';
import type { VpsEvent } from '../../schemas/vps/events.ts';
import { VpsModel } from '../../services/processes/vpsReconciler/model.ts';
import { planWarmPool, removalReactions, slotIdOf } from '../../services/processes/vpsReconciler/warmKeeper.ts';

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
/** A site whose nodes are all well. */
const steady = { candidates: () => [], nodeLost: () => false };
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
    const effects = planWarmPool('p1', modelWith(2, []), T0, 2_000, { candidates: () => (reads++, []), nodeLost: () => false });
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
    const effects = kinds(planWarmPool('p1', model, T0, 2_000, steady));
    expect(effects).toEqual(['vps.reapWarmSlot:old:EXPIRED', 'vps.reapWarmSlot:c:SURPLUS', 'vps.reapWarmSlot:b:SURPLUS']);
    const kept = modelWith(3, [
      { slotId: 'a', placedAt: T0 - 1_000, ready: true },
      { slotId: 'b', placedAt: T0 - 500 },
      { slotId: 'c', placedAt: T0 - 100 },
    ]);
    kept.hosts.heard({ nodeId: 'n1', at: T0, instances: [{ id: 'c', runtime: 'crun', desiredState: 'stopped', state: 'stopped', addresses: [], warm: true }] });
    expect(kinds(planWarmPool('p1', kept, T0, 2_000, steady))).toEqual(['prepareSlot:b', 'vps.markWarmSlotReady:c']);
  });

  it('reaps a slot its node reports in error and places its replacement', () => {
    const model = modelWith(1, [{ slotId: 'a', placedAt: T0 - 1_000, ready: true }]);
    model.hosts.heard({ nodeId: 'n1', at: T0, instances: [{ id: 'a', runtime: 'crun', desiredState: 'stopped', state: 'error', addresses: [], warm: true }] });
    expect(kinds(planWarmPool('p1', model, T0, 2_000, steady))).toEqual([
      'vps.reapWarmSlot:a:FAILED',
      `vps.placeWarmSlot:${slotIdOf('p1', 'small', 'img', 1)}`,
    ]);
  });

  it('reaps the slots of a lost node and places their replacements; the lost node is sent its removal again only when heard listing the slot', () => {
    const model = modelWith(2, [
      { slotId: 'a', placedAt: T0 - 1_000, ready: true },
      { slotId: 'b', placedAt: T0 - 500 },
    ]);
    const node = (nodeId: string) => ({ nodeId, labels: {}, capacity: SMALL, allocated: SMALL, schedulable: true, agentless: false });
    const effects = planWarmPool('p1', model, T0, 2_000, { candidates: () => [node('n1'), node('n2')], nodeLost: (nodeId) => nodeId === 'n1' });
    // Its replacements are never placed on it, even while the nodes read model still shows it schedulable.
    const offered = effects.flatMap((e) =>
      e.kind === 'command' && e.name === 'vps.placeWarmSlot' ? [(e.payload as { candidates: unknown[] }).candidates] : [],
    );
    expect(offered[0]).toEqual([{ ...node('n1'), schedulable: false }, node('n2')]);
    expect(kinds(effects)).toEqual([
      'vps.reapWarmSlot:a:NODE_LOST',
      'vps.reapWarmSlot:b:NODE_LOST',
      `vps.placeWarmSlot:${slotIdOf('p1', 'small', 'img', 2)}`,
      `vps.placeWarmSlot:${slotIdOf('p1', 'small', 'img', 3)}`,
    ]);
    model.apply({ type: 'WarmSlotReaped', data: { siteId: 'dc1', slotId: 'a', poolId: 'p1', nodeId: 'n1', reason: 'NODE_LOST', reapedAt: iso(T0) } }, 10);
    model.apply({ type: 'WarmSlotReaped', data: { siteId: 'dc1', slotId: 'b', poolId: 'p1', nodeId: 'n1', reason: 'SURPLUS', reapedAt: iso(T0) } }, 11);
    // The resync pass: the surplus slot's removal goes again, the lost node's does not.
    expect(removalReactions(model.warm, T0 + 60_000, 2_000).map((r) => r.key)).toEqual(['slot:n1/b']);
    // The lost node is heard listing its slot: its removal goes then.
    expect(removalReactions(model.warm, T0 + 60_000, 2_000, [model.warm.removals.get('n1/a')!]).map((r) => r.key)).toEqual(['slot:n1/a']);
  });
});
