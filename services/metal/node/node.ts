import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { withInventoryAddresses } from '../../../schemas/metal/inventory.ts';
import { metalEvents, type MetalEvent } from '../../../schemas/metal/events.ts';
import { operationStates, ownerlessStates, type NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

// The state's shape is the contract's (other modules read it through `nodeRef`); the fold is this module's.
export { isAgentless, type NodeAggregateState, type NodeOperationRef } from '../../../schemas/metal/nodeState.ts';

export const nodeAggregate = defineAggregate<NodeAggregateState, MetalEvent>({
  module: 'metal',
  type: 'node',
  initialState: { exists: false },
  stateVersion: 1,
  catalog: new EventCatalog(metalEvents),
  evolve(state, event) {
    if (event.type === 'NodeEnrolled') {
      return { exists: true, state: 'enrolled', maintenance: false, maintenanceReason: null, current: null, failed: null, inventory: null, ...event.data };
    }
    if (!state.exists) return state;
    switch (event.type) {
      case 'NodeMaintenanceSet':
        return {
          ...state,
          maintenance: event.data.on,
          maintenanceReason: event.data.on ? event.data.reason : null,
          maintenanceSource: event.data.on ? event.data.source : null,
        };
      case 'NodeOperationRequested': {
        const { operation, workflowId, inputs } = event.data;
        const rescuedFrom = operation === 'rescue' ? state.state : (state.rescuedFrom ?? null);
        const owner = event.data.tenantId ?? state.owner ?? null;
        return { ...state, state: operationStates[operation].working, current: { operation, workflowId, inputs }, failed: null, rescuedFrom, owner };
      }
      case 'NodeWipeStarted':
        return { ...state, state: 'wiping' };
      case 'NodeOperationCompleted': {
        const done = event.data.state ?? operationStates[event.data.operation].done;
        return { ...state, state: done, current: null, owner: ownerlessStates.has(done) ? null : (state.owner ?? null) };
      }
      case 'NodeOperationFailed': {
        const { reason, failedStep, maintenance } = event.data;
        const failed = state.current ? { ...state.current, reason, failedStep } : null;
        return {
          ...state,
          state: 'failed',
          current: null,
          failed,
          maintenance: maintenance || state.maintenance,
          maintenanceReason: maintenance ? reason : state.maintenanceReason,
          maintenanceSource: maintenance ? 'platform' : state.maintenanceSource,
        };
      }
      case 'NodeCancelRequested':
        return state.current ? { ...state, current: { ...state.current, cancelReason: event.data.reason } } : state;
      case 'NodeOperationCancelled': {
        const back = event.data.state;
        const rescuedFrom = event.data.operation === 'rescue' ? null : (state.rescuedFrom ?? null);
        return { ...state, state: back, current: null, rescuedFrom, owner: back === 'ready' ? null : (state.owner ?? null) };
      }
      case 'NodeInventoryRecorded': {
        const { inventory, inBand, findings } = event.data;
        return {
          ...state,
          inventory,
          addresses: withInventoryAddresses(state.addresses ?? [], inventory),
          ...(inBand ? { inBandInventory: inBand } : {}),
          ...(findings ? { inventoryFindings: findings } : {}),
        };
      }
      case 'NodeReleaseUnverified':
        return state;
      case 'NodeRescueEnded': {
        const back = state.rescuedFrom ?? 'ready';
        return { ...state, state: back, rescuedFrom: null, owner: back === 'ready' ? null : (state.owner ?? null) };
      }
      case 'NodeRetired':
        return { ...state, state: 'retired', current: null };
      case 'NodeLabelsSet':
        return { ...state, labels: event.data.labels };
    }
  },
});
