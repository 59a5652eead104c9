import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { metalEvents, type MetalEvent } from '../../../schemas/metal/events.ts';
import type { NodeState } from '../../../schemas/metal/nodeState.ts';
import { defineAggregate } from '../../commands/commandDefinition.ts';

export type NodeAggregateState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly nodeId: string;
      readonly siteId: string;
      readonly state: NodeState;
      readonly maintenance: boolean;
      readonly maintenanceReason: string | null;
      readonly bmc: { readonly address: string; readonly credentialsRef: string };
      readonly hardwareProfile: string;
      readonly macs: readonly string[];
    };

export const nodeAggregate = defineAggregate<NodeAggregateState, MetalEvent>({
  module: 'metal',
  type: 'node',
  initialState: { exists: false },
  catalog: new EventCatalog(metalEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'NodeEnrolled':
        return { exists: true, state: 'enrolled', maintenance: false, maintenanceReason: null, ...event.data };
      case 'NodeMaintenanceSet':
        return state.exists ? { ...state, maintenance: event.data.on, maintenanceReason: event.data.on ? event.data.reason : null } : state;
    }
  },
});
