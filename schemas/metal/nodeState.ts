import type { DeployDriver } from './hardwareProfile.ts';
import type { BmcConnection } from '../agent/bmc.ts';
import { aggregateRef } from '../aggregateRef.ts';
import type { InBandInventory } from './inBandInventory.ts';
import type { Inventory } from './inventory.ts';
import type { InventoryFinding } from './inventoryFinding.ts';
import type { NodeLabels } from './nodeLabels.ts';
import type { NodeOperation } from './workflow.ts';

/**
 * Lifecycle states of a bare-metal node. Each operation has a working state; `failed` is left only by an explicit
 * verb. Maintenance is a flag beside the state, not a state.
 */
export const NodeState = {
  enrolled: 'enrolled',
  inspecting: 'inspecting',
  ready: 'ready',
  deploying: 'deploying',
  deployed: 'deployed',
  releasing: 'releasing',
  wiping: 'wiping',
  rescuing: 'rescuing',
  rescue: 'rescue',
  remediating: 'remediating',
  retiring: 'retiring',
  failed: 'failed',
  retired: 'retired',
} as const;
export type NodeState = (typeof NodeState)[keyof typeof NodeState];
export const nodeStates = Object.values(NodeState) as [NodeState, ...NodeState[]];

/** Where a node belongs to no tenant any more: back in the pool, or out of the fleet. */
export const ownerlessStates: ReadonlySet<NodeState> = new Set<NodeState>(['ready', 'retired']);

/**
 * Where a host still has its instances (and warm slots), or will again: `deployed`, and a remediation or rescue under
 * way (each returns the node to where it was). Any other state (failed, released, wiped, retired, redeployed) means
 * what ran on it runs there no more.
 */
export const instanceKeepingStates: ReadonlySet<string> = new Set<NodeState>(['deployed', 'remediating', 'rescuing', 'rescue']);

/**
 * The working state of each node operation, and where the node rests when the operation completes. A remediation
 * returns to the state it started from (`NodeOperationCompleted.state`); `done` is only its fallback.
 */
export const operationStates = {
  inspect: { working: 'inspecting', done: 'ready' },
  deploy: { working: 'deploying', done: 'deployed' },
  release: { working: 'releasing', done: 'ready' },
  rescue: { working: 'rescuing', done: 'rescue' },
  retire: { working: 'retiring', done: 'retired' },
  remediate: { working: 'remediating', done: 'ready' },
} as const satisfies Record<string, { working: NodeState; done: NodeState }>;

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
      /**
       * Whether the node ever runs `bcd`: `none` when its hardware profile deploys agentless or its pool runs no agent
       * (what enrolment decided, `deployDriverOf`); absent means `bcd`.
       */
      readonly agent?: 'none' | 'bcd';
      /** Its inspection after enrolment boots the ramdisk (`metal.enroll … inspectInBand`). */
      readonly inspectInBand?: true;
      readonly current?: NodeOperationRef | null;
      readonly failed?: (NodeOperationRef & { readonly reason: string; readonly failedStep: string | null }) | null;
      readonly inventory?: Inventory | null;
      /** What the last in-band inspection's ramdisk saw from inside, and where it disagrees with `inventory`. */
      readonly inBandInventory?: InBandInventory | null;
      readonly inventoryFindings?: readonly InventoryFinding[] | null;
      /** Where `metal.unrescue` returns to. */
      readonly rescuedFrom?: NodeState | null;
      /** The tenant the node works for; cleared whenever the node is back in `ready`. */
      readonly owner?: string | null;
      /** The operator's labels (`metal.setLabels`); absent: none. The derived `bc.dev/` ones are never state. */
      readonly labels?: NodeLabels;
    };

/**
 * The deploy driver the node is driven with, as its enrolment recorded it: `agentless` when its hardware profile deploys
 * agentless or its pool runs no agent, else `image-stream` (the built-in default, and every enrolment older than
 * hardware profiles). Recorded, never looked up again: a profile redeclared later does not change enrolled nodes.
 */
export const deployDriverOf = (node: { readonly agent?: 'none' | 'bcd' }): DeployDriver => (node.agent === 'none' ? 'agentless' : 'image-stream');

/** Whether the node deploys agentless: only its site agent ever acts on it (out of band, over Redfish). */
export const isAgentless = (node: { readonly agent?: 'none' | 'bcd' }): boolean => deployDriverOf(node) === 'agentless';

/** What another module may read of a node (`bc.evt.metal.node.<nodeId>`). */
export const nodeRef = aggregateRef<NodeAggregateState>('metal', 'node');

/** Where a remediation may start, and so where it returns to: the resting states a node serves from. */
export const remediableStates = ['ready', 'deployed'] as const satisfies readonly NodeState[];
export type RemediableState = (typeof remediableStates)[number];
