import type { z } from 'zod';
import type { AggregateRef } from '../../../schemas/aggregateRef.ts';
import type { CommandExposure } from '../../../schemas/commandExposure.ts';
import type { EventCatalog, EventDefinition } from '../../../schemas/eventCatalog.ts';

/** An event as `decide` returns it and `evolve` folds it. */
export interface DomainEventLike {
  readonly type: string;
  readonly data: unknown;
}

/**
 * An aggregate: its subject tokens, its initial state and the pure fold over its events. The catalog upcasts and
 * validates what is read from the log.
 */
export interface AggregateDefinition<S = unknown, E extends DomainEventLike = DomainEventLike> {
  readonly module: string;
  readonly type: string;
  readonly initialState: S;
  readonly catalog: EventCatalog<EventDefinition>;
  evolve(state: S, event: E): S;
  /**
   * Set when each message should carry the state `evolve` folded after it (`aggregateState.ts`), so a cold load is the
   * last message's one get. The state must survive a JSON round trip unchanged. Raise it whenever `evolve` would fold
   * the same events into another state (a code change): a load ignores a state written under another version and
   * folds the events again.
   */
  readonly stateVersion?: number;
}

/**
 * Every aggregate defined in this process, by `<module>.<type>`: how the kernel turns another module's `AggregateRef`
 * (the contract) into the fold that module owns. A process serving a command has imported the command's module,
 * and the composition roots import the command catalog, so every aggregate a decider may read is here.
 */
const definedAggregates = new Map<string, AggregateDefinition<any, any>>();

export function defineAggregate<S, E extends DomainEventLike>(aggregate: AggregateDefinition<S, E>): AggregateDefinition<S, E> {
  const frozen = Object.freeze(aggregate);
  const name = `${frozen.module}.${frozen.type}`;
  // One fold per aggregate: a second (a narrower "view" of the same subject) would make a reference ambiguous, and the
  // aggregate cache, keyed by subject, would hand one fold's state to the other. Read another aggregate by reference.
  if (definedAggregates.has(name)) throw new Error(`aggregate ${name} is defined twice: read another module's aggregate through its AggregateRef`);
  definedAggregates.set(name, frozen);
  return frozen;
}

/** An aggregate, as its own module holds it (its definition) or as another module names it (a contract reference). */
export type AggregateSource<S> = AggregateDefinition<S> | AggregateRef<S>;

/** The definition behind a reference; a definition is returned as it is. */
export function resolveAggregate<S>(aggregate: AggregateSource<S>): AggregateDefinition<S> {
  if ('evolve' in aggregate) return aggregate;
  const definition = definedAggregates.get(`${aggregate.module}.${aggregate.type}`);
  if (definition === undefined) {
    throw new Error(`aggregate ${aggregate.module}.${aggregate.type} is not defined in this process: import its module (the command catalog does)`);
  }
  return definition as AggregateDefinition<S>;
}

/** Facts about the command itself, passed to `decide` so deciders stay pure. */
export interface CommandContext {
  readonly commandId: string;
  readonly actor: string;
  /** ISO time the command was received; deciders use it instead of reading the clock. */
  readonly now: string;
}

/**
 * Reads another aggregate's state for a precondition such as "the site exists": the latest state this process has
 * seen, if the log agreed with it within the last second (else it is read from the log). Use it for facts that do not
 * go back; it is not a lock. `fresh` reads the log: for an aggregate another process writes (a workflow: the executor
 * records its steps itself), whose newest facts this process may not have seen. `settled`: only what never changes
 * once the aggregate exists is read (a workflow's node and steps), so any snapshot this process holds will do, without
 * asking the log. Another module's aggregate is named by its contract reference (`schemas/<module>/…State.ts`), never
 * by its definition.
 */
export type AggregateLoader = <S2>(aggregate: AggregateSource<S2>, id: string, options?: { fresh?: boolean; settled?: boolean }) => Promise<S2>;

/**
 * A command: validated by `schema`, routed to one aggregate instance by `aggregateId`, decided purely by `decide`.
 * `decide` throws a `DomainError` to refuse and returns `[]` for an idempotent no-op.
 */
export interface CommandDefinition<N extends string = string, P = any, S = any, E extends DomainEventLike = DomainEventLike, D = unknown> {
  readonly name: N;
  /** Who may send it; every process's set of commands is derived from this (`services/api/commandCatalog.ts`). */
  readonly exposure: readonly CommandExposure[];
  readonly schema: z.ZodType<P>;
  readonly aggregate: AggregateDefinition<S, E>;
  aggregateId(payload: P, context: CommandContext): string;
  /** Loads the other aggregates the decision depends on; their state is a precondition, not a lock. */
  dependencies?(payload: P, load: AggregateLoader): Promise<D>;
  decide(payload: P, state: S, context: CommandContext & { readonly dependencies: D }): readonly NoInfer<E>[];
}

/** Every command defined in this process, by name: what a sender routes a NATS request by (`commandRouteKey`). */
const definedCommands = new Map<string, CommandDefinition<string, any, any, any, any>>();

export function defineCommand<const N extends string, P, S, E extends DomainEventLike, D = undefined>(
  command: CommandDefinition<N, P, S, E, D>,
): CommandDefinition<N, P, S, E, D> {
  const frozen = Object.freeze(command);
  definedCommands.set(frozen.name, frozen);
  return frozen;
}

/**
 * The aggregate a command will be decided on (`<module>.<type>.<id>`), as far as a sender can tell before it is
 * validated: the key its NATS request is routed by (`schemas/commandPartitions.ts`). Undefined when this process has
 * not defined the command or the payload names no aggregate; a wrong key costs only the route, never the decision.
 */
export function commandRouteKey(name: string, payload: unknown, commandId: string): string | undefined {
  const command = definedCommands.get(name);
  if (command === undefined) return undefined;
  let id: unknown;
  try {
    id = command.aggregateId(payload, { commandId, actor: '', now: '' });
  } catch {
    return undefined;
  }
  return typeof id === 'string' && id !== '' ? `${command.aggregate.module}.${command.aggregate.type}.${id}` : undefined;
}
