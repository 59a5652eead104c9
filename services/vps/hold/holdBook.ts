import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { holdBookEvents, type HoldBookEvent } from '../../../schemas/vps/events.ts';
import type { HoldBookState, HoldRecord } from '../../../schemas/vps/holdState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** How long the book remembers a hold after it ended (expired or released): long enough to answer a late release. */
export const ENDED_HOLDS_KEPT_MS = 24 * 3_600 * 1_000;

/** The holds still worth remembering at `nowMs`: the book of a busy site would otherwise grow with every hold ever placed. */
function rememberedAt(holds: HoldBookState['holds'], nowMs: number): HoldBookState['holds'] {
  const ended = (h: HoldRecord) => Date.parse(h.releasedAt ?? h.expiresAt);
  return Object.fromEntries(Object.entries(holds).filter(([, h]) => ended(h) + ENDED_HOLDS_KEPT_MS > nowMs));
}

/**
 * A site's hold book (`bc.evt.vps.holdBook.<siteId>`): every hold at the site. Holds are decided here, one subject
 * per site, so optimistic concurrency serialises them: two holds decided at once append against the same sequence and
 * one re-decides seeing the other, which is what makes overcommitting a node impossible. A hold that ended more than
 * a day before a new one is placed is forgotten (by the new event's time, so a replay forgets the same); the read
 * model keeps every hold. Metal-pool instances are placed here too (`vps.placeInstance`), for the same reason: a
 * placement and a hold decided at once cannot both take the same capacity.
 */
export const holdBookAggregate = defineAggregate<HoldBookState, HoldBookEvent>({
  module: 'vps',
  type: 'holdBook',
  initialState: { holds: {} },
  catalog: new EventCatalog(holdBookEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'HoldPlaced': {
        const { holdId, holder, nodes, wholeNodes, selector, durationSeconds, placedAt, expiresAt } = event.data;
        const held = nodes.map(({ nodeId, resources }) => ({ nodeId, resources }));
        const hold = { holdId, holder, nodes: held, wholeNodes, selector, durationSeconds, placedAt, expiresAt, releasedAt: null };
        return { ...state, holds: { ...rememberedAt(state.holds, Date.parse(placedAt)), [holdId]: hold } };
      }
      case 'HoldReleased': {
        const hold = state.holds[event.data.holdId];
        if (!hold) return state;
        return { ...state, holds: { ...state.holds, [hold.holdId]: { ...hold, releasedAt: event.data.releasedAt } } };
      }
      case 'InstancePlaced': {
        const { instanceId, tenantId, poolId, nodeId, resources, fromHolds, warmSlot } = event.data;
        // A slot taken hands its capacity to the instance in the same event: it is never counted twice, nor freed between.
        const { [warmSlot?.slotId ?? '']: _taken, ...slots } = state.warmSlots ?? {};
        const instances = { ...state.instances, [instanceId]: { instanceId, tenantId, poolId, nodeId, resources, fromHolds } };
        return { ...state, instances, ...(warmSlot ? { warmSlots: slots } : {}) };
      }
      case 'InstanceRelocationRequested': {
        const placed = state.instances?.[event.data.instanceId];
        if (!placed) return state;
        const relocation = { fromNodeId: event.data.fromNodeId, reason: event.data.reason };
        return { ...state, instances: { ...state.instances, [placed.instanceId]: { ...placed, relocation } } };
      }
      case 'InstanceRelocated': {
        const { instanceId, tenantId, poolId, nodeId, resources, fromHolds } = event.data;
        return { ...state, instances: { ...state.instances, [instanceId]: { instanceId, tenantId, poolId, nodeId, resources, fromHolds } } };
      }
      case 'InstanceUnplaced': {
        const { [event.data.instanceId]: _gone, ...rest } = state.instances ?? {};
        return { ...state, instances: rest };
      }
      case 'WarmSlotPlaced': {
        const { slotId, poolId, flavorId, image, runtime, nodeId, resources, placedAt } = event.data;
        const slot = { slotId, poolId, flavorId, image, runtime, nodeId, resources, placedAt, readyAt: null };
        return { ...state, warmSlots: { ...state.warmSlots, [slotId]: slot } };
      }
      case 'WarmSlotReady': {
        const slot = state.warmSlots?.[event.data.slotId];
        return slot ? { ...state, warmSlots: { ...state.warmSlots, [slot.slotId]: { ...slot, readyAt: event.data.readyAt } } } : state;
      }
      case 'WarmSlotReaped': {
        const { [event.data.slotId]: _reaped, ...rest } = state.warmSlots ?? {};
        return { ...state, warmSlots: rest };
      }
    }
  },
});
