import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { refusalEvents, type RefusalEvent } from '../../../schemas/trust/events.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** How many refusals of one kind were counted without an event of their own (`bc.evt.trust.refusals.<kind>`). */
export interface RefusalsState {
  readonly counted: number;
}

export const refusalsAggregate = defineAggregate<RefusalsState, RefusalEvent>({
  module: 'trust',
  type: 'refusals',
  initialState: { counted: 0 },
  catalog: new EventCatalog(refusalEvents),
  evolve(state, event) {
    return { counted: state.counted + event.data.refused };
  },
});
