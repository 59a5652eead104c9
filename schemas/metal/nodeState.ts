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

/** The working state of each node operation, and where the node rests when the operation completes. */
export const operationStates = {
  inspect: { working: 'inspecting', done: 'ready' },
  deploy: { working: 'deploying', done: 'deployed' },
  release: { working: 'releasing', done: 'ready' },
  rescue: { working: 'rescuing', done: 'rescue' },
} as const satisfies Record<string, { working: NodeState; done: NodeState }>;
