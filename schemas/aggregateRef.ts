/**
 * Another module's aggregate, as a decider reads it for a precondition ("the site exists", "the pool is offered to
 * the tenant"): its subject tokens and the shape of its state, declared here in the contract. The fold stays in the
 * owning module; the command kernel (`services/platform/commands/`) finds it by these tokens and loads the state, so a
 * module never imports another module's code.
 */
export interface AggregateRef<S> {
  readonly module: string;
  readonly type: string;
  /** Never set: carries the state type, so a load through the reference is typed. */
  readonly stateShape?: S;
}

export function aggregateRef<S>(module: string, type: string): AggregateRef<S> {
  return Object.freeze({ module, type });
}
