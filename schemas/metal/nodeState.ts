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
  failed: 'failed',
  retired: 'retired',
} as const;
export type NodeState = (typeof NodeState)[keyof typeof NodeState];
export const nodeStates = Object.values(NodeState) as [NodeState, ...NodeState[]];
