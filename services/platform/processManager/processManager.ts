import type { EventCatalog, EventDefinition, EventOf } from '../../../schemas/eventCatalog.ts';

/** A refusal the `commands` service answered a sent command with (the command is settled, nothing was appended). */
export interface Refusal {
  readonly code: string;
  readonly message: string;
}

/**
 * An engine command a process manager decided: the host sends it over NATS with this id (derived from what it
 * answers, so a redelivered event sends the same command again and the bus answers it as a duplicate) and stamps
 * the host's lease term on it.
 */
export interface EngineCommand<T = never> {
  readonly kind: 'command';
  readonly name: string;
  readonly payload: unknown;
  readonly commandId: string;
  /**
   * What to do instead of the rest of the reaction when the command is refused; `undefined` carries on. Pure: it
   * only looks at the refusal.
   */
  readonly ifRefused?: (refusal: Refusal) => readonly Effect<T>[] | undefined;
}

/** A JetStream message a process manager decided (work for an executor); its id dedupes a repeated publish. */
export interface Publication {
  readonly kind: 'publish';
  readonly subject: string;
  readonly data: unknown;
  readonly msgId: string;
}

/** Work outside the log (a provider's API) the process manager's `perform` does; it answers with more effects. */
export interface Task<T> {
  readonly kind: 'task';
  readonly task: T;
}

/** The event definitions of a catalog: `ProcessManager<DefinitionsOf<typeof eventCatalog>, …>`. */
export type DefinitionsOf<C> = C extends EventCatalog<infer D> ? D : never;

export type Effect<T = never> = EngineCommand<T> | Publication | Task<T>;

/** Effects run in order under `key`: one key's reactions run one after another, different keys concurrently. */
export interface Reaction<T = never> {
  readonly key: string;
  readonly effects: readonly Effect<T>[];
  /** Dropped when the key already has a reaction waiting or running (a resync need not queue behind one). */
  readonly coalesce?: boolean;
}

/**
 * An observation from outside the log a process manager takes besides its events (the rollout controller's: a module of
 * a host's verified heartbeat). None for a process manager that declares no observation type.
 */
export type Observed<O> = [O] extends [never] ? never : { readonly type: 'observed'; readonly observation: O };

/** What a process manager decides on: an event of the log, its own start, a resync tick, or an observation. */
export type Input<E, O = never> =
  | { readonly type: 'event'; readonly event: E }
  | { readonly type: 'resumed'; readonly now: number }
  | { readonly type: 'tick'; readonly now: number }
  | Observed<O>;

/** What a process manager folds: the log's events, its clock and observations, and what came of the effects it decided. */
export type Fold<E, T = never, O = never> =
  /** `seq`: the stream sequence of the message that carried it. */
  | { readonly type: 'event'; readonly event: E; readonly seq: number }
  /** Folded just before the tick is decided on, so the decision reads the model at that time. */
  | { readonly type: 'tick'; readonly now: number }
  /** Folded just before it is decided on; folded even before the host's consumer runs (it only decides from then on). */
  | Observed<O>
  /** Folded as soon as the command is decided (before it is sent), so the next decision already counts it. */
  | { readonly type: 'decided'; readonly command: EngineCommand<T> }
  /**
   * `appended`: this send put events in the log (not a repeat of an earlier send, nor a decision that changed nothing).
   * `seq` (unless refused): the stream sequence as of which the log holds what the command decided (its own message,
   * the original of a repeat, or the aggregate's last message when it changed nothing). The log's own copy of that
   * message reaches the consumer later, so a model applying the command at once knows which events it is ahead of.
   */
  | { readonly type: 'sent'; readonly command: EngineCommand<T>; readonly refusal?: Refusal; readonly appended?: boolean; readonly seq?: number }
  | { readonly type: 'performed'; readonly task: T; readonly error?: unknown; readonly now: number };

/**
 * A process manager: a durable consumer's worth of reactions to the log, as data. `evolve` folds (the same inputs
 * give the same model: that is how a restarted host gets it back); `decide` says what to do and does nothing. The
 * host (`ProcessManagerHost`) owns the consumer, the queues, the heartbeats, acks and dead letters, and sends what
 * `decide` answers. `evolve` changes the model in place: models index thousands of nodes or instances.
 */
export interface ProcessManager<D extends EventDefinition, M, T = never, O = never> {
  /** The durable consumer's name, also its dead-letter subject (`bc.dlq.<durable>.<seq>`). */
  readonly durable: string;
  readonly filter: string;
  readonly catalog: EventCatalog<D>;
  /** A crashed host's unacked events return after this; reactions heartbeat (`working()`) every third of it. */
  readonly ackWaitMs: number;
  /** Events whose reactions may be under way at once (the consumer's `max_ack_pending`). */
  readonly maxInFlight: number;
  /** How often `decide` gets a `tick`; none when absent. */
  readonly tickMs?: number;
  readonly model: M;
  evolve(model: M, input: Fold<EventOf<D>, T, O>): void;
  decide(input: Input<EventOf<D>, O>, model: M): readonly Reaction<T>[];
  /** Does a task's outside work and answers the effects it calls for; throws to fail the reaction. */
  perform?(task: T, model: M, signal: AbortSignal): Promise<readonly Effect<T>[]>;
  /** Whether a task's error is only folded (`performed` with the error: e.g. a backoff) instead of failing the reaction. */
  absorbs?(error: unknown): boolean;
}
