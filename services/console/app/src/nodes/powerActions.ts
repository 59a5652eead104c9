import { remediableStates } from '../../../../../schemas/metal/nodeState.ts';
import type { NodeView, Role } from '../api/shapes.ts';

/**
 * A power button on the node page: a `metal.remediate` of a built-in power profile (`services/metal/profiles/builtin.ts`),
 * so power work is a workflow like any other, queued behind none, cancelled like any other, and recorded with its output.
 */
export interface PowerAction {
  readonly id: 'check' | 'on' | 'off' | 'cycle';
  readonly label: string;
  readonly profile: 'bmc-check' | 'power-on' | 'power-off' | 'power-cycle';
  /** Setting the power interrupts whatever runs on the machine: the remediation must be allowed to destroy. */
  readonly destructive: boolean;
  readonly consequence: string;
}

export const powerActions: readonly PowerAction[] = [
  {
    id: 'check',
    label: 'Read power',
    profile: 'bmc-check',
    destructive: false,
    consequence: 'The site agent reads the power state from the BMC; nothing changes.',
  },
  { id: 'on', label: 'Power on', profile: 'power-on', destructive: true, consequence: 'The BMC powers the machine on. The node stays in its state.' },
  {
    id: 'off',
    label: 'Power off',
    profile: 'power-off',
    destructive: true,
    consequence: 'The BMC cuts the machine’s power at once, without a shutdown: whatever runs on it stops.',
  },
  {
    id: 'cycle',
    label: 'Power cycle',
    profile: 'power-cycle',
    destructive: true,
    consequence: 'The BMC restarts the machine: whatever runs on it stops, and it boots again.',
  },
];

/**
 * The power buttons this role may use on this node now: operators (as `metal.remediate` is exposed), on a ready or
 * deployed node with no operation under way (the decider's `remediableStates`; a second operation would be refused).
 */
export function powerActionsFor(role: Role, node: Pick<NodeView, 'state' | 'workflowId'>): readonly PowerAction[] {
  if (role !== 'admin' && role !== 'operator') return [];
  if (!(remediableStates as readonly string[]).includes(node.state) || node.workflowId !== null) return [];
  return powerActions;
}

export const powerPayload = (action: PowerAction, nodeId: string) => ({ nodeId, profile: action.profile, allowDestructive: action.destructive });
