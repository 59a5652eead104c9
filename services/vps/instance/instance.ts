import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { instanceEvents, type InstanceEvent } from '../../../schemas/vps/events.ts';
import type { InstanceState } from '../../../schemas/vps/instanceState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** An instance (`bc.evt.vps.instance.<instanceId>`): what its tenant wants and what the reconciler last saw. */
export const instanceAggregate = defineAggregate<InstanceState, InstanceEvent>({
  module: 'vps',
  type: 'instance',
  initialState: { tenantId: null, desired: 'running', observed: null, providerInstanceId: null, addresses: [], message: null },
  catalog: new EventCatalog(instanceEvents),
  evolve(state, event) {
    const tenantId = state.tenantId ?? event.data.tenantId;
    switch (event.type) {
      case 'InstanceDesiredStateSet':
        return { ...state, tenantId, desired: event.data.desired };
      case 'InstanceObserved': {
        const { observed, providerInstanceId, addresses, message } = event.data;
        return { ...state, tenantId, observed, providerInstanceId, addresses, message };
      }
    }
  },
});
