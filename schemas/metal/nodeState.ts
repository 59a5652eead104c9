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

/** Where a remediation may start, and so where it returns to: the resting states a node serves from. */
export const remediableStates = ['ready', 'deployed'] as const satisfies readonly NodeState[];
export type RemediableState = (typeof remediableStates)[number];
