import type { Rejection } from '../../../schemas/deadLetters.ts';
import type { EventCatalog, EventDefinition, EventOf } from '../../../schemas/eventCatalog.ts';

/** A refusal the `commands` service answered a sent command with (the command is settled, nothing was appended). */
export interface Refusal {
  readonly code: string;
  readonly message: string;
}

/** What a sent command was answered with when it was decided: its events (those of the original, for a repeat). */
export interface Accepted {
  /** This send put the events in the log (not a repeat of an earlier send, nor a decision that changed nothing). */
  readonly appended: boolean;
  readonly events: readonly { readonly type: string; readonly data: unknown }[];
}

/**
 * An engine command a process manager decided: the host sends it over NATS with this id (derived from what it
 * answers, so a redelivered event sends the same command again and the bus answers it as a duplicate) and stamps
 * the host's lease term on it.
 */
export interface EngineCommand<T = never, O = never> {
  readonly kind: 'command';
  readonly name: string;
  readonly payload: unknown;
  readonly commandId: string;
  /**
   * Which refusals settle it (the host's one retry policy, `engineCommands.ts`): `moot` (the default) only those that
   * say it is done or overtaken, any other code is retried; `refusal` every domain refusal (a budget used up, a quota),
   * only infrastructure trouble is retried. A command whose refusal is itself an answer the reaction acts on.
   */
  readonly settles?: 'moot' | 'refusal';
  /**
   * What to do instead of the rest of the reaction when the command is refused; `undefined` carries on. Pure: it
   * only looks at the refusal.
   */
  readonly ifRefused?: (refusal: Refusal) => readonly Effect<T, O>[] | undefined;
  /** What to do next (before the rest of the reaction) when it is decided; `undefined` carries on. Pure as `ifRefused`. */
  readonly ifAccepted?: (answer: Accepted) => readonly Effect<T, O>[] | undefined;
}

/** A JetStream message a process manager decided (work for an executor); its id dedupes a repeated publish. */
export interface Publication {
  readonly kind: 'publish';
  readonly subject: string;
  readonly data: unknown;
  readonly msgId: string;
}

/** A core NATS message, not stored (an owner's notification): fire and forget, nothing waits for a reader. */
export interface Announcement {
  readonly kind: 'announce';
  readonly subject: string;
  readonly data: unknown;
}

/** Work outside the log (a provider's API) the process manager's `perform` does; it answers with more effects. */
export interface Task<T> {
  readonly kind: 'task';
  readonly task: T;
}

/**
 * What a task read, handed back to the process manager within the reaction that asked for it: folded, then decided on.
 * The reactions on the running reaction's key run in its place; those on other keys run on their queues (they must
 * not observe back onto this key: it waits for them). The effect is done when all of them are. None for a process
 * manager that declares no observation type.
 */
export type Observation<O> = [O] extends [never] ? never : { readonly kind: 'observe'; readonly observation: O };

/** The event definitions of a catalog: `ProcessManager<DefinitionsOf<typeof eventCatalog>, …>`. */
export type DefinitionsOf<C> = C extends EventCatalog<infer D> ? D : never;

export type Effect<T = never, O = never> = EngineCommand<T, O> | Publication | Announcement | Task<T> | Observation<O>;

/** Effects run in order under `key`: one key's reactions run one after another, different keys concurrently. */
export interface Reaction<T = never, O = never> {
  readonly key: string;
  readonly effects: readonly Effect<T, O>[];
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
  | { readonly type: 'decided'; readonly command: EngineCommand<T, O> }
  /**
   * `appended`: this send put events in the log (not a repeat of an earlier send, nor a decision that changed nothing).
   * `seq` (unless refused): the stream sequence as of which the log holds what the command decided (its own message,
   * the original of a repeat, or the aggregate's last message when it changed nothing). The log's own copy of that
   * message reaches the consumer later, so a model applying the command at once knows which events it is ahead of.
   */
  | { readonly type: 'sent'; readonly command: EngineCommand<T, O>; readonly refusal?: Refusal; readonly appended?: boolean; readonly seq?: number }
  | { readonly type: 'performed'; readonly task: T; readonly error?: unknown; readonly now: number };

/**
 * A stream other than the event log a process manager's consumer reads (the autonomy engine's pass markers on
 * `BC_SIGNALS`). Its messages are not the event store's: `read` parses each into the inputs it carries. The model is
 * not folded back from it on start (such a process manager keeps no model it could rebuild from the stream).
 */
export interface MessageSource<E> {
  readonly stream: string;
  /** Where a new durable starts: every message the stream holds (the default), or those published from then on. */
  readonly deliver?: 'all' | 'new';
  /** The message's inputs, or why it is set aside (dead-lettered and acked). */
  read(data: Uint8Array): { readonly events: readonly E[] } | { readonly rejection: Rejection };
}

/**
 * A process manager: a durable consumer's worth of reactions to the log (or to another stream, or to ticks and
 * observations), as data. `evolve` folds (the same inputs give the same model: that is how a restarted host gets it
 * back); `decide` says what to do and does nothing. The host (`ProcessManagerHost`) owns the consumer, the queues,
 * the heartbeats, acks and dead letters, and sends what `decide` answers. `evolve` changes the model in place: models
 * index thousands of nodes or instances. `E`: what a consumed message carries (the log's events by default).
 */
export interface ProcessManager<D extends EventDefinition, M, T = never, O = never, E = EventOf<D>> {
  /** The durable consumer's name, also its dead-letter subject (`bc.dlq.<durable>.<seq>`) and its commands' actor. */
  readonly durable: string;
  /**
   * The subjects it consumes. None for a process manager of ticks and observations only (the BMC monitor): the host
   * then opens no consumer and starts it with a tick, and `catalog`, `source` and `ackWaitMs` go unused.
   */
  readonly filter?: string;
  /** The events it reads from the log (`BC_EVENTS`); the rest of a batch is left out unread. */
  readonly catalog?: EventCatalog<D>;
  /** The stream it reads instead of the log, and how its messages read. */
  readonly source?: MessageSource<E>;
  /** A crashed host's unacked messages return after this; reactions heartbeat (`working()`) every third of it. */
  readonly ackWaitMs?: number;
  /**
   * Messages whose reactions may be under way at once (the consumer's `max_ack_pending`); without a `filter`, reactions
   * running at once across its keys (its probes in flight, say).
   */
  readonly maxInFlight: number;
  /**
   * With a `filter`, reactions running at once across its keys (unbounded by default: `maxInFlight` bounds the
   * messages). Must be above `maxInFlight` when a reaction observes onto other keys, since it waits for them.
   */
  readonly maxReactions?: number;
  /** How often `decide` gets a `tick`; none when absent. */
  readonly tickMs?: number;
  readonly model: M;
  evolve(model: M, input: Fold<E, T, O>): void;
  decide(input: Input<E, O>, model: M): readonly Reaction<T, O>[];
  /** Does a task's outside work and answers the effects it calls for; throws to fail the reaction. */
  perform?(task: T, model: M, signal: AbortSignal): Promise<readonly Effect<T, O>[]>;
  /** Whether a task's error is only folded (`performed` with the error: e.g. a backoff) instead of failing the reaction. */
  absorbs?(error: unknown): boolean;
}
