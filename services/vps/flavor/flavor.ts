import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { flavorEvents, type FlavorEvent } from '../../../schemas/vps/events.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export type FlavorState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly flavorId: string;
      readonly vcpus: number;
      readonly memoryMib: number;
      readonly diskGib: number;
      /** The provider offer id the flavor is sold as, by pool id. */
      readonly offers: Readonly<Record<string, string>>;
    };

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

/** The offer the flavor is sold as in `poolId`; undefined when the pool does not sell it. */
export function offerIn(flavor: FlavorState, poolId: string): string | undefined {
  return flavor.exists && Object.hasOwn(flavor.offers, poolId) ? flavor.offers[poolId] : undefined;
}
