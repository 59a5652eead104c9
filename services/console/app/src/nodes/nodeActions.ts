import { isRefusedInMaintenance } from '../../../../../schemas/metal/maintenanceRule.ts';
import type { NodeRowView, Role } from '../api/shapes.ts';

/** What an action's offer depends on: a row of the node list has it, and so has a node's full view. */
export type ActionableNode = Pick<NodeRowView, 'nodeId' | 'state' | 'agent' | 'maintenance' | 'workflowId'>;

/** A lifecycle verb the console offers on a node: the command it sends and when (role, node state) it is offered. */
export interface NodeAction {
  readonly id: 'deploy' | 'release' | 'rescue' | 'unrescue' | 'maintenance-on' | 'maintenance-off' | 'retry' | 'cancel' | 'retire';
  readonly label: string;
  readonly command: string;
  readonly roles: readonly Role[];
  readonly offered: (node: ActionableNode) => boolean;
  /** What confirming does, in words. */
  readonly consequence: string;
  readonly danger?: boolean;
}

const operators: readonly Role[] = ['admin', 'operator'];
/** The verbs a tenant token may send on its own nodes (the commands exposed to `tenant` in `services/api/commandCatalog.ts`). */
const operatorsAndTenants: readonly Role[] = ['admin', 'operator', 'tenant'];

export const nodeActions: readonly NodeAction[] = [
  {
    id: 'deploy',
    label: 'Deploy',
    command: 'metal.deploy',
    roles: operatorsAndTenants,
    offered: (n) => n.state === 'ready',
    consequence: 'The node boots its ramdisk, the image is written to its disk and it boots the image.',
  },
  {
    id: 'release',
    label: 'Release',
    command: 'metal.undeploy',
    roles: operatorsAndTenants,
    offered: (n) => n.state === 'deployed',
    danger: true,
    consequence: 'Every disk of the node is wiped (attested by its ramdisk) and the node returns to ready.',
  },
  {
    id: 'rescue',
    label: 'Rescue',
    command: 'metal.rescue',
    roles: operatorsAndTenants,
    offered: (n) => ['ready', 'deployed'].includes(n.state) && n.agent !== 'none',
    consequence: 'The node reboots into the rescue ramdisk; its disks are left as they are.',
  },
  {
    id: 'unrescue',
    label: 'Leave rescue',
    command: 'metal.unrescue',
    roles: operatorsAndTenants,
    offered: (n) => n.state === 'rescue',
    consequence: 'The node leaves rescue for the state it was rescued from.',
  },
  {
    id: 'maintenance-on',
    label: 'Maintenance on',
    command: 'metal.setMaintenance',
    roles: operators,
    offered: (n) => !n.maintenance,
    consequence: 'The node is taken out of service until an operator clears maintenance.',
  },
  {
    id: 'maintenance-off',
    label: 'Maintenance off',
    command: 'metal.setMaintenance',
    roles: operators,
    offered: (n) => n.maintenance,
    consequence: 'The node goes back into service.',
  },
  {
    id: 'retry',
    label: 'Retry',
    command: 'metal.retry',
    roles: operators,
    offered: (n) => n.state === 'failed',
    consequence: 'The operation that failed runs again as a new workflow.',
  },
  {
    id: 'cancel',
    label: 'Cancel operation',
    command: 'metal.cancel',
    roles: operators,
    offered: (n) => n.workflowId !== null,
    danger: true,
    consequence:
      'The running operation stops: no new step starts, a destructive step already running is waited for. A node whose disks were touched ends failed, in maintenance.',
  },
  {
    id: 'retire',
    label: 'Retire',
    command: 'metal.retire',
    roles: operators,
    // The decider's states (services/metal/node/retire.ts): an idle node, never one at work or deployed.
    offered: (n) => ['enrolled', 'ready', 'failed'].includes(n.state) && n.workflowId === null,
    danger: true,
    consequence: 'Every disk of the node is wiped (attested by its ramdisk), the machine is powered off and the node leaves the fleet for good.',
  },
];

/**
 * The actions this role may take on this node now (none for viewers and approvers): the same states and maintenance
 * rule (`schemas/metal/maintenanceRule.ts`) the API's deciders hold, so nothing offered is then refused.
 */
export const actionsFor = (role: Role, node: ActionableNode): NodeAction[] =>
  nodeActions.filter((a) => a.roles.includes(role) && a.offered(node) && !isRefusedInMaintenance(a.command, node.maintenance));

/** The command body of an action on a node; `reason` where the command takes one (maintenance on, cancel). */
export function actionPayload(action: NodeAction, nodeId: string, reason = ''): object {
  const why = reason.trim() ? { reason: reason.trim() } : {};
  if (action.id === 'maintenance-on') return { nodeId, on: true, ...why };
  if (action.id === 'maintenance-off') return { nodeId, on: false };
  if (action.id === 'cancel') return { nodeId, ...why };
  return { nodeId };
}

/** Whether the action's dialog asks for a reason. */
export const asksReason = (action: NodeAction): boolean => action.id === 'maintenance-on' || action.id === 'cancel';

/** What a bulk action over `nodes` would do: the nodes it is offered on now, and those it skips (and so never sends). */
export function bulkPlan<N extends ActionableNode>(role: Role, action: NodeAction, nodes: readonly N[]): { applies: N[]; skipped: N[] } {
  const applies = nodes.filter((n) => actionsFor(role, n).some((a) => a.id === action.id));
  return { applies, skipped: nodes.filter((n) => !applies.includes(n)) };
}

/**
 * The actions a bulk selection offers: those offered on at least one selected node. Not deploy (it asks per node), nor
 * retire: a node leaves the fleet for good one confirmation at a time.
 */
export const bulkActionsFor = (role: Role, nodes: readonly ActionableNode[]): NodeAction[] =>
  nodeActions.filter((a) => a.id !== 'deploy' && a.id !== 'retire' && nodes.some((n) => actionsFor(role, n).some((offered) => offered.id === a.id)));
