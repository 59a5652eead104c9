import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { holdBookEvents, type HoldBookEvent } from '../../../schemas/vps/events.ts';
import type { HoldBookState } from '../../../schemas/vps/holdState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/**
 * A site's hold book (`bc.evt.vps.holdBook.<siteId>`): every hold at the site. Holds are decided here, one subject
 * per site, so optimistic concurrency serialises them: two holds decided at once append against the same sequence and
 * one re-decides seeing the other, which is what makes overcommitting a node impossible.
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
        return { holds: { ...state.holds, [holdId]: hold } };
      }
      case 'HoldReleased': {
        const hold = state.holds[event.data.holdId];
        if (!hold) return state;
        return { holds: { ...state.holds, [hold.holdId]: { ...hold, releasedAt: event.data.releasedAt } } };
      }
    }
  },
});
