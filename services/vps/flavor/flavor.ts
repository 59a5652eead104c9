import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { flavorEvents, type FlavorEvent } from '../../../schemas/vps/events.ts';
import type { FlavorState } from '../../../schemas/vps/flavorState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** An instance size (`bc.evt.vps.flavor.<flavorId>`) and the pools that sell it. */
export const flavorAggregate = defineAggregate<FlavorState, FlavorEvent>({
  module: 'vps',
  type: 'flavor',
  initialState: { exists: false },
  catalog: new EventCatalog(flavorEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'FlavorCreated':
        return { exists: true, ...event.data, offers: {} };
      case 'FlavorMapped':
        return state.exists ? { ...state, offers: { ...state.offers, [event.data.poolId]: event.data.offerId } } : state;
    }
  },
});
