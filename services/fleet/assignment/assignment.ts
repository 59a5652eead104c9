import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { assignmentEvents, type AssignmentEvent } from '../../../schemas/fleet/assignmentEvents.ts';
import type { AssignmentState } from '../../../schemas/fleet/assignmentState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** A host's assignment (`bc.evt.fleet.assignment.<nodeId>`): its template, its manual pins and the plan they resolve to. */
export const assignmentAggregate = defineAggregate<AssignmentState, AssignmentEvent>({
  module: 'fleet',
  type: 'assignment',
  initialState: { exists: false },
  catalog: new EventCatalog(assignmentEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'HostPlanAssigned':
        return { exists: true, ...event.data };
      // A request to install the plan changes nothing of it: the rollout controller acts on it.
      case 'HostPlanApplyRequested':
        return state;
    }
  },
});
