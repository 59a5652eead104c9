import type { HoldBookEvent } from '../../../schemas/vps/events.ts';
import { warmStartLabelKey } from '../../../schemas/metal/nodeLabels.ts';
import { poolRef } from '../../../schemas/vps/poolState.ts';
import { MarkWarmSlotReady, PlaceWarmSlot, ReapWarmSlot } from '../../../schemas/vps/warmPool.ts';
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
