import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { publisherEvents, type PublisherEvent, type PublishersState } from '../../../schemas/fleet/publishers.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** The module publishers the control plane trusts, and their keys (`bc.evt.fleet.publishers.all`). */
export const publishersAggregate = defineAggregate<PublishersState, PublisherEvent>({
  module: 'fleet',
  type: 'publishers',
  initialState: { publishers: {} },
  catalog: new EventCatalog(publisherEvents),
  evolve(state, event) {
    const { publisherId } = event.data;
    const current = state.publishers[publisherId];
    switch (event.type) {
      case 'PublisherRegistered':
        return { publishers: { ...state.publishers, [publisherId]: { publicKey: event.data.publicKey, retiredKeys: [], revoked: false } } };
      case 'PublisherKeyRotated':
        if (!current) return state;
        return {
          publishers: {
            ...state.publishers,
            [publisherId]: { ...current, publicKey: event.data.publicKey, retiredKeys: [...current.retiredKeys, event.data.previousPublicKey] },
          },
        };
      case 'PublisherRevoked':
        if (!current) return state;
        return { publishers: { ...state.publishers, [publisherId]: { ...current, revoked: true } } };
    }
  },
});
