import { isDeepStrictEqual } from 'node:util';
import type { HoldBookEvent } from '../../../schemas/vps/events.ts';
import { driverLabelKey, warmStartLabelKey } from '../../../schemas/metal/nodeLabels.ts';
import type { HoldBookState } from '../../../schemas/vps/holdState.ts';
import type { HoldCandidate } from '../../../schemas/vps/holdCommands.ts';
import { poolRef } from '../../../schemas/vps/poolState.ts';
import type { InstanceReservation } from '../../../schemas/vps/tenantState.ts';
import { MarkWarmSlotReady, PlaceWarmSlot, ReapWarmSlot, type WarmSlot } from '../../../schemas/vps/warmPool.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { bookSnapshotAt } from '../placement/bookSnapshot.ts';
import { holdBookAggregate } from './holdBook.ts';
import { choosePlacement, runtimeOf } from './placeInstance.ts';

/**
 * `vps.placeWarmSlot` (engine: the reconciler's keeper): places one warm slot of the pool's setting on the site's book,
 * by the same `place` as an instance, on nodes labelled `bc.dev/warm-start.<runtime>` only (their runtime declares
 * warm starts). A slot draws on no hold, the pool's own included: what it keeps is counted taken for everyone until a
 * create of the pool takes it. The slot id again, or a flavor and image the pool already keeps enough of: a no-op. A
 * flavor and image the pool does not keep warm: PRECONDITION_FAILED. Nothing fits: NO_CAPACITY with each node's reason.
 */
export const placeWarmSlot = defineCommand({
  name: 'vps.placeWarmSlot',
  exposure: ['engine'],
  schema: PlaceWarmSlot,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  dependencies: async (command, load) => ({ pool: await load(poolRef, command.poolId) }),
  decide(command, state, { dependencies: { pool }, now }): HoldBookEvent[] {
    const { siteId, poolId, slotId, flavorId, image } = command;
    if (state.warmSlots?.[slotId] || state.instances?.[slotId]) return [];
    const runtime = runtimeOf(pool, poolId, siteId);
    const wanted = pool.exists ? pool.warm?.flavors.find((f) => f.flavorId === flavorId && f.image === image) : undefined;
    if (!wanted || wanted.count === 0) throw new DomainError('PRECONDITION_FAILED', `pool ${poolId} keeps no warm ${flavorId} with image ${image}`);
    const kept = Object.values(state.warmSlots ?? {}).filter((s) => s.poolId === poolId && s.flavorId === flavorId && s.image === image);
    if (kept.length >= wanted.count) return [];
    // Not the pool's own id: a slot never draws on the pool's holds, whose capacity is for its instances.
    const request = { instanceId: slotId, tenantId: `warm:${poolId}`, poolId: `warm:${poolId}`, runtime, resources: wanted.resources };
    const selector = { matchLabels: { [warmStartLabelKey(runtime)]: 'true' } };
    const chosen = choosePlacement(siteId, { ...request, selector }, bookSnapshotAt(state, command.candidates, Date.parse(now)));
    const { nodeId, resources, freeBefore, considered } = chosen;
    return [{ type: 'WarmSlotPlaced', data: { siteId, slotId, poolId, flavorId, image, runtime, nodeId, resources, freeBefore, considered, placedAt: now } }];
  },
});

/** `vps.markWarmSlotReady` (engine): the slot's node reported it prepared. Unknown (taken, reaped) or ready already: a no-op. */
export const markWarmSlotReady = defineCommand({
  name: 'vps.markWarmSlotReady',
  exposure: ['engine'],
  schema: MarkWarmSlotReady,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  decide(command, state, { now }): HoldBookEvent[] {
    const slot = state.warmSlots?.[command.slotId];
    if (!slot || slot.readyAt !== null) return [];
    return [{ type: 'WarmSlotReady', data: { siteId: command.siteId, slotId: slot.slotId, nodeId: slot.nodeId, readyAt: now } }];
  },
});

/** `vps.reapWarmSlot` (engine): the slot leaves the book and its capacity is free. Unknown (taken, reaped already): a no-op. */
export const reapWarmSlot = defineCommand({
  name: 'vps.reapWarmSlot',
  exposure: ['engine'],
  schema: ReapWarmSlot,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  decide(command, state, { now }): HoldBookEvent[] {
    const slot = state.warmSlots?.[command.slotId];
    if (!slot) return [];
    const { siteId, reason } = command;
    return [{ type: 'WarmSlotReaped', data: { siteId, slotId: slot.slotId, poolId: slot.poolId, nodeId: slot.nodeId, reason, reapedAt: now } }];
  },
});

/**
 * The ready slot a create takes, if any: of its pool, flavor, image, runtime and size, on a node still schedulable with
 * the runtime's driver; the longest ready first, then by slot id, so the same book gives the same slot. With it, what
 * `InstancePlaced` records: the node, its free capacity counting the slot's as the instance's, how many slots could
 * have been taken.
 */
export function takeWarmSlot(state: HoldBookState, reservation: InstanceReservation, runtime: string, candidates: readonly HoldCandidate[], nowMs: number) {
  const size = { vcpus: reservation.resources.vcpus, memoryMib: reservation.resources.memoryMib, diskGib: reservation.resources.diskGib };
  const usable = (slot: WarmSlot) => {
    const node = candidates.find((c) => c.nodeId === slot.nodeId);
    return node?.schedulable === true && !node.agentless && node.labels[driverLabelKey(runtime)] !== undefined;
  };
  const takeable = Object.values(state.warmSlots ?? {})
    .filter((s) => s.readyAt !== null && s.poolId === reservation.poolId && s.flavorId === reservation.flavorId && s.image === reservation.image)
    .filter((s) => s.runtime === runtime && isDeepStrictEqual(s.resources, size) && usable(s))
    .sort((a, b) => a.readyAt!.localeCompare(b.readyAt!) || a.slotId.localeCompare(b.slotId));
  const slot = takeable[0];
  if (!slot) return undefined;
  const node = bookSnapshotAt(state, candidates, nowMs).candidates.find((c) => c.nodeId === slot.nodeId)!;
  const freeBefore = {
    vcpus: Math.max(0, node.capacity.vcpus - node.allocated.vcpus) + size.vcpus,
    memoryMib: Math.max(0, node.capacity.memoryMib - node.allocated.memoryMib) + size.memoryMib,
    diskGib: Math.max(0, node.capacity.diskGib - node.allocated.diskGib) + size.diskGib,
  };
  return { slot, nodeId: slot.nodeId, resources: size, freeBefore, fromHolds: [], considered: takeable.length };
}
