import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { instanceEvents, type InstanceEvent } from '../../../schemas/vps/events.ts';
import type { InstanceState } from '../../../schemas/vps/instanceState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/**
 * An instance (`bc.evt.vps.instance.<instanceId>`): what its tenant wants, what the reconciler last saw, and the
 * remediation running on it or the failed one that left it needing attention.
 */
export const instanceAggregate = defineAggregate<InstanceState, InstanceEvent>({
  module: 'vps',
  type: 'instance',
  initialState: {
    tenantId: null,
    desired: 'running',
    observed: null,
    providerInstanceId: null,
    addresses: [],
    message: null,
    remediation: null,
    attention: null,
  },
  catalog: new EventCatalog(instanceEvents),
  evolve(state, event) {
    const tenantId = state.tenantId ?? event.data.tenantId;
    switch (event.type) {
      case 'InstanceDesiredStateSet':
        return { ...state, tenantId, desired: event.data.desired, attention: null };
      case 'InstanceObserved': {
        const { observed, providerInstanceId, addresses, message } = event.data;
        return { ...state, tenantId, observed, providerInstanceId, addresses, message };
      }
      case 'InstanceRemediationRequested': {
        const { workflowId, profile, returnTo } = event.data;
        return { ...state, tenantId, remediation: { workflowId, profile, returnTo }, attention: null };
      }
      case 'InstanceRemediationCompleted':
        return { ...state, tenantId, desired: event.data.returnTo, remediation: null };
      case 'InstanceRemediationFailed': {
        const { workflowId, reason, failedStep } = event.data;
        return { ...state, tenantId, remediation: null, attention: { workflowId, reason, failedStep } };
      }
    }
  },
});
