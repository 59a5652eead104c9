import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { siteEvents, type SiteEvent } from '../../../schemas/site/events.ts';
import type { SiteState } from '../../../schemas/site/siteState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export const siteAggregate = defineAggregate<SiteState, SiteEvent>({
  module: 'site',
  type: 'site',
  initialState: { exists: false },
  catalog: new EventCatalog(siteEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'SiteCreated':
        return { exists: true, ...event.data };
    }
  },
});
