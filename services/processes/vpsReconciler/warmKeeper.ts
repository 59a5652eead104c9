import { randomUUID } from 'node:crypto';
import { idFor } from '../../../schemas/ids.ts';
import type { HoldCandidate } from '../../../schemas/vps/holdCommands.ts';
import type { WarmSlotReapReason } from '../../../schemas/vps/warmPool.ts';
import type { Effect, Reaction } from '../../platform/processManager/processManager.ts';
import type { ConvergeTask } from './effects.ts';
import type { HostReports } from './hostReports.ts';
import type { VpsModel } from './model.ts';
import { warmKey, type KeptSlot, type SlotRemoval, type WarmSlots } from './warmModel.ts';

type Effects = Effect<ConvergeTask>[];

/** The id of the `ordinal`-th slot ever placed for the pool's flavor and image: the same pass again asks for the same slot. */
export const slotIdOf = (poolId: string, flavorId: string, image: string, ordinal: number) => idFor('warm', `${poolId}/${flavorId}/${image}/${ordinal}`);

const reap = (slot: KeptSlot, reason: WarmSlotReapReason): Effect<ConvergeTask> => ({
  kind: 'command',
  name: 'vps.reapWarmSlot',
  payload: { siteId: slot.siteId, slotId: slot.slotId, reason },
  commandId: idFor('warm-reap', slot.slotId),
});

/**
 * One pass of the keeper over a pool's warm slots (docs/vps.md, "Warm pools"), on the model as it is now: a slot on a
 * lost node is reaped (`NODE_LOST`, `nodeLost` judges), one its node reports in error (`FAILED`), one prepared longer ago than the pool allows (`EXPIRED`), and past the
 * count the pool keeps of its flavor and image (`SURPLUS`: those not ready first, then the newest); short of the
 * count, new slots are placed (`vps.placeWarmSlot` with the site's nodes, read only then); a slot its node reports
 * prepared and stopped is marked ready; one not yet seen so is sent to its node again each `resendMs`. A pool whose
 * setting went away keeps nothing: every slot is surplus.
 */
export function planWarmPool(
  poolId: string,
  model: VpsModel,
  now: number,
  resendMs: number,
  world: { candidates(siteId: string): HoldCandidate[]; nodeLost(nodeId: string): boolean },
): Effects {
  const pool = model.pools.get(poolId);
  const warm = model.warm;
  if (!pool?.runtime || !pool.siteId) return [];
  const siteId = pool.siteId;
  const setting = warm.settings.get(poolId) ?? { flavors: [], maxSlotAgeSeconds: Number.POSITIVE_INFINITY };
  const live = [...warm.slots.values()].filter((s) => s.poolId === poolId).sort((a, b) => a.placedAt.localeCompare(b.placedAt));
  const effects: Effects = [];
  const reaped = new Set<string>();
  const lostNodes = new Set<string>();
  const reportOf = (slot: KeptSlot) => model.hosts.reportFor(slot.nodeId, slot.slotId)?.report;
  for (const slot of live) {
    if (world.nodeLost(slot.nodeId)) lostNodes.add(slot.nodeId);
    const reason = lostNodes.has(slot.nodeId)
      ? 'NODE_LOST'
      : reportOf(slot)?.state === 'error'
        ? 'FAILED'
        : Date.parse(slot.placedAt) + setting.maxSlotAgeSeconds * 1_000 <= now
          ? 'EXPIRED'
          : undefined;
    if (reason) {
      effects.push(reap(slot, reason));
      reaped.add(slot.slotId);
    }
  }
  const groups = new Map(setting.flavors.map((f) => [warmKey(f.flavorId, f.image), { ...f, slots: [] as KeptSlot[] }]));
  for (const slot of live) {
    if (reaped.has(slot.slotId)) continue;
    const key = warmKey(slot.flavorId, slot.image);
    if (!groups.has(key)) groups.set(key, { flavorId: slot.flavorId, image: slot.image, count: 0, resources: slot.resources, slots: [] });
    groups.get(key)!.slots.push(slot);
  }
  let nodes: HoldCandidate[] | undefined;
  for (const group of groups.values()) {
    const surplus = [...group.slots].sort((a, b) => Number(a.readyAt !== null) - Number(b.readyAt !== null) || b.placedAt.localeCompare(a.placedAt));
    for (const slot of surplus.slice(0, Math.max(0, group.slots.length - group.count))) {
      effects.push(reap(slot, 'SURPLUS'));
      reaped.add(slot.slotId);
    }
    const next = warm.placedFor(poolId, group.flavorId, group.image);
    for (let i = 0; i < group.count - group.slots.length; i++) {
      // A node found lost here takes no replacement, whatever the read model's presence says of it yet.
      nodes ??= world.candidates(siteId).map((c) => (lostNodes.has(c.nodeId) ? { ...c, schedulable: false } : c));
      const slotId = slotIdOf(poolId, group.flavorId, group.image, next + i);
      effects.push({
        kind: 'command',
        name: 'vps.placeWarmSlot',
        payload: { siteId, poolId, slotId, flavorId: group.flavorId, image: group.image, candidates: nodes },
        commandId: `warm-place-${randomUUID()}`,
        // No node has room (or none declares warm starts): creates are placed cold meanwhile; the next pass asks again.
        ifRefused: (refusal) => (refusal.code === 'NO_CAPACITY' ? [] : undefined),
      });
    }
  }
  for (const slot of live) {
    if (reaped.has(slot.slotId) || slot.readyAt !== null) continue;
    const report = reportOf(slot);
    if (report?.desiredState === 'stopped' && report.state === 'stopped') {
      effects.push({ kind: 'command', name: 'vps.markWarmSlotReady', payload: { siteId, slotId: slot.slotId }, commandId: idFor('warm-ready', slot.slotId) });
    } else if (slot.preparedSentAt === undefined || now - slot.preparedSentAt >= resendMs) {
      effects.push({ kind: 'task', task: { converge: `warm:${poolId}`, step: 'prepareSlot', slotId: slot.slotId } });
    }
  }
  return effects;
}

/** The keeper's pass over a pool, queued once: a tick, an event or a heartbeat need not line up behind another. */
export const warmPass = (poolId: string): Reaction<ConvergeTask> => ({
  key: `warm:${poolId}`,
  effects: [{ kind: 'task', task: { converge: `warm:${poolId}`, step: 'warm', poolId } }],
  coalesce: true,
});

/**
 * The removal of a slot from its node, sent again each `resendMs` until a heartbeat of that node no longer lists it. A
 * lost node's is sent again only when the node is heard listing the slot (`only`): a wiped or dead host is not sent
 * one every pass for ever.
 */
export function removalReactions(warm: WarmSlots, now: number, resendMs: number, only?: readonly SlotRemoval[]): Reaction<ConvergeTask>[] {
  const removals = only ?? [...warm.removals.values()].filter((r) => !r.nodeLost);
  return removals
    .filter((r) => r.removeSentAt === undefined || now - r.removeSentAt >= resendMs)
    .map((r) => {
      const converge = `slot:${r.nodeId}/${r.slotId}`;
      return { key: converge, effects: [{ kind: 'task', task: { converge, step: 'removeSlot', nodeId: r.nodeId, slotId: r.slotId } }], coalesce: true };
    });
}

/** The pools whose slots on the node a heartbeat may have news of: a slot not ready yet, or reported in error. */
export function poolsHeardOf(model: VpsModel, nodeId: string, reports: HostReports): Set<string> {
  const pools = new Set<string>();
  for (const slot of model.warm.slots.values()) {
    if (slot.nodeId !== nodeId) continue;
    const state = reports.reportFor(nodeId, slot.slotId)?.report?.state;
    if (slot.readyAt === null || state === 'error') pools.add(slot.poolId);
  }
  return pools;
}
