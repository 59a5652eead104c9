import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { withInventoryAddresses, type Inventory } from '../../../schemas/metal/inventory.ts';
import type { BmcConnection } from '../../../schemas/metal/bmc.ts';
import { metalEvents, type MetalEvent } from '../../../schemas/metal/events.ts';
import { operationStates, ownerlessStates, type NodeState } from '../../../schemas/metal/nodeState.ts';
import type { NodeOperation } from '../../../schemas/metal/workflow.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** The operation a node is in (or last failed at): enough to retry it with the same inputs. */
export interface NodeOperationRef {
  readonly operation: NodeOperation;
  readonly workflowId: string;
  readonly inputs: Readonly<Record<string, unknown>>;
  /** Set once `metal.cancel` asked for the operation to stop. */
  readonly cancelReason?: string;
}

export type NodeAggregateState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly nodeId: string;
      readonly siteId: string;
      readonly state: NodeState;
      readonly maintenance: boolean;
      readonly maintenanceReason: string | null;
      /** Who set the flag: only a `bmc` flag clears itself when the BMC answers again. */
      readonly maintenanceSource?: 'operator' | 'bmc' | 'platform' | null;
      readonly bmc: BmcConnection;
      readonly hardwareProfile: string;
      readonly macs: readonly string[];
      /** Where the machine's own API answers (enrolled nodes without any have none). */
      readonly addresses?: readonly string[];
      /** The metal pool the node serves (absent: none). */
      readonly poolId?: string;
      /** Whether the node ever runs `bcd` (its pool's `agent`); absent means `bcd`. */
      readonly agent?: 'none' | 'bcd';
      readonly current?: NodeOperationRef | null;
      readonly failed?: (NodeOperationRef & { readonly reason: string; readonly failedStep: string | null }) | null;
      readonly inventory?: Inventory | null;
      /** Where `metal.unrescue` returns to. */
      readonly rescuedFrom?: NodeState | null;
      /** The tenant the node works for; cleared whenever the node is back in `ready`. */
      readonly owner?: string | null;
    };

/** Whether the node is in an agentless pool: only its site agent ever acts on it (out of band, over Redfish). */
export const isAgentless = (node: { readonly agent?: 'none' | 'bcd' }): boolean => node.agent === 'none';

export const nodeAggregate = defineAggregate<NodeAggregateState, MetalEvent>({
  module: 'metal',
  type: 'node',
  initialState: { exists: false },
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
      case 'NodeInventoryRecorded':
        return { ...state, inventory: event.data.inventory, addresses: withInventoryAddresses(state.addresses ?? [], event.data.inventory) };
      case 'NodeReleaseUnverified':
        return state;
      case 'NodeRescueEnded': {
        const back = state.rescuedFrom ?? 'ready';
        return { ...state, state: back, rescuedFrom: null, owner: back === 'ready' ? null : (state.owner ?? null) };
      }
      case 'NodeRetired':
        return { ...state, state: 'retired', current: null };
    }
  },
});
