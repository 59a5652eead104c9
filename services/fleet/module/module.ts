import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { moduleEvents, type ModuleEvent, type ModuleState } from '../../../schemas/fleet/modules.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** A module and its published versions (`bc.evt.fleet.module.<name>`); versions are immutable once published. */
export const moduleAggregate = defineAggregate<ModuleState, ModuleEvent>({
  module: 'fleet',
  type: 'module',
  initialState: { versions: [] },
  catalog: new EventCatalog(moduleEvents),
  evolve(state, event) {
    const { module: _module, ...version } = event.data;
    return { versions: [...state.versions, version] };
  },
});
