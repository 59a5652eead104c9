import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { DesiredInstanceState, ObservedInstanceState } from '../../../schemas/vps/commands.ts';
import { instanceEvents, type InstanceEvent } from '../../../schemas/vps/events.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/**
 * An instance's desired and observed state. What it was created with lives in the tenant's `InstanceRequested`; the
 * desired state is `running` from then on until a tenant says otherwise.
 */
export interface InstanceState {
  /** The tenant whose events this subject carries: set by its first event, so another tenant's reuse of the id is refused. */
  readonly tenantId: string | null;
  readonly desired: DesiredInstanceState;
  readonly observed: ObservedInstanceState | null;
  readonly providerInstanceId: string | null;
  readonly addresses: readonly string[];
  readonly message: string | null;
}

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

/** Whether another tenant's events are on this instance's subject. */
export const heldByAnother = (state: InstanceState, tenantId: string): boolean => state.tenantId !== null && state.tenantId !== tenantId;
