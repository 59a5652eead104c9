import { AckPolicy, DeliverPolicy, jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Rejection } from '../../../schemas/deadLetters.ts';
import type { EventCatalog, EventDefinition, EventOf } from '../../../schemas/eventCatalog.ts';
import { Streams } from '../../../schemas/subjects.ts';
import { DeadLetterQueue } from '../deadLetters/deadLetterQueue.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { knownEvents } from '../eventStore/knownEvents.ts';
import type { LeaseTerm } from '../lease/leaderLease.ts';
import type { Logger } from '../logger.ts';
import { withinReplayDeadline } from '../nats/replayDeadline.ts';
import { DURABLE_PULL } from '../nats/durablePull.ts';
import { natsCommandChannel, type CommandChannel } from '../commands/commandChannel.ts';
import { sendEngineCommand } from './engineCommands.ts';
import type { Observed, ProcessManager, Reaction, Refusal } from './processManager.ts';
import { ReactionQueues } from './reactionQueues.ts';
import { runEffects, type EffectPorts } from './runEffects.ts';

/**
 * Runs one process manager on its durable consumer of `BC_EVENTS` (or of its `source`'s stream: the autonomy engine's
 * pass markers on `BC_SIGNALS`, read by the source, never folded back on start). Each event is folded into the model as it
 * arrives (events arrive in log order, so decisions see the log's order), then its reactions are queued per key: one
 * key's in order, different keys concurrently. The event is acked once all its reactions are done, heartbeating
 * (`working()`) meanwhile, and nak'ed (1 s) if one failed. A message the event store did not write, or cannot be
 * read, is dead-lettered and acked without folding or reacting. On start the model is folded back from the log up
 * to what the durable delivered before, so a redelivered event reacts again but is not applied twice.
 *
 * Besides its events a process manager may take observations from outside the log (`O`: what the composition root
 * hands `observe`, e.g. verified heartbeats): each is folded, then decided on like a tick, on the same queues.
 *
 * A process manager without a `filter` has no consumer: it runs on ticks (the first at start) and observations
 * alone, with at most `maxInFlight` reactions running at once (the BMC monitor's probes).
 *
 * A task may answer an observation of what it read (`observe`): it is folded and decided on within the reaction
 * that asked, so the message it reacts to is acked only once those reactions are done too.
 */
export class ProcessManagerHost<D extends EventDefinition, M, T = never, O = never, E = EventOf<D>> {
  readonly #abort = new AbortController();
  #fail: (err: Error) => void = () => undefined;
  /** Resolves if the event loop ends without a stop: the process must then exit so its supervisor restarts it. */
  readonly failure = new Promise<Error>((resolve) => (this.#fail = resolve));
  readonly #deadLetters: DeadLetterQueue;
  readonly #queues: ReactionQueues;
  readonly #ports: EffectPorts<T, O>;
  /** Highest stream sequence folded into the model. */
  #appliedSeq = 0;
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;
  #tick: NodeJS.Timeout | undefined;
  /** Set once the model caught up with the log: observations are only folded before that, never decided on. */
  #running = false;

  constructor(
    nc: NatsConnection,
    private readonly store: EventStore,
    private readonly pm: ProcessManager<D, M, T, O, E>,
    private readonly log: Logger,
    /** The leader lease the host runs under: its term is stamped on every command it sends. */
    lease?: LeaseTerm,
    /** Where its commands go: default NATS; the process's own channel when it may run a `commands` service too. */
    commands: CommandChannel = natsCommandChannel(nc),
  ) {
    this.#deadLetters = new DeadLetterQueue(nc, pm.durable, log);
    // With a consumer its `max_ack_pending` bounds the reactions under way.
    // A message's reaction may wait for the reactions it observes onto: slots for them must remain.
    if (pm.maxReactions !== undefined && pm.maxReactions <= pm.maxInFlight) throw new Error(`${pm.durable}: maxReactions must exceed maxInFlight`);
    this.#queues = new ReactionQueues(pm.filter === undefined ? pm.maxInFlight : (pm.maxReactions ?? Infinity));
    const js = jetstream(nc);
    const signal = this.#abort.signal;
    this.#ports = {
      send: async (command) => {
        let refusal: Refusal | undefined;
        const result = await sendEngineCommand(commands, log, signal, command.name, command.payload, command.commandId, {
          ...(lease ? { lease } : {}),
          actor: lease?.service ?? pm.durable,
          onRefused: (err) => (refusal = { code: err.code, message: err.message }),
          ...(command.settles ? { settles: command.settles } : {}),
        });
        if (refusal) return { refusal };
        // `sendEngineCommand` answers undefined only for a refusal.
        return { appended: !result!.duplicate && result!.events.length > 0, seq: result!.seq, events: result!.events };
      },
      publish: async ({ subject, data, msgId }) => void (await js.publish(subject, JSON.stringify(data), { msgID: msgId })),
      announce: ({ subject, data }) => nc.publish(subject, JSON.stringify(data)),
      observe: (observation, key) => this.observeWithin(observation, key),
      perform: async (task) => {
        if (!pm.perform) throw new Error(`${pm.durable} decided a task but performs none`);
        signal.throwIfAborted();
        return pm.perform(task, pm.model, signal);
      },
      absorbs: (error) => !signal.aborted && (pm.absorbs?.(error) ?? false),
      fold: (outcome) => pm.evolve(pm.model, outcome),
      now: () => Date.now(),
    };
  }

  get model(): M {
    return this.pm.model;
  }

  async start(): Promise<void> {
    const { pm } = this;
    if (pm.filter === undefined) {
      this.#running = true;
      this.startTicks(true);
      return;
    }
    const { filter } = pm;
    const jsm = this.store.jsm;
    const stream = pm.source?.stream ?? Streams.events.name;
    const config = { ack_wait: this.ackWaitMs * 1_000_000, max_ack_pending: pm.maxInFlight };
    let info = await jsm.consumers.info(stream, pm.durable).catch(() => undefined);
    if (!info) {
      info = await jsm.consumers.add(stream, {
        durable_name: pm.durable,
        filter_subject: filter,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: pm.source?.deliver === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
        ...config,
      });
    } else if (info.config.max_ack_pending !== config.max_ack_pending || info.config.ack_wait !== config.ack_wait) {
      info = await jsm.consumers.update(stream, pm.durable, config);
    }
    // 2.9 may silently drop a filter it does not understand; a host fed the whole stream would still work, but slowly.
    if (info.config.filter_subject !== filter) throw new Error(`consumer ${pm.durable} has filter ${info.config.filter_subject ?? '(none)'}`);
    // Everything delivered before is folded in; what was delivered but not acked comes back and only reacts.
    await this.foldUpTo(info.delivered.stream_seq);
    const consumer = await this.store.js.consumers.get(stream, pm.durable);
    // A durable deleted under us ends the loop (the lease is given up and the host started afresh, which recreates it).
    this.#messages = await consumer.consume({ max_messages: pm.maxInFlight, ...DURABLE_PULL });
    const messages = this.#messages;
    this.#loop = (async () => {
      this.#running = true;
      this.decideAlone({ type: 'resumed', now: Date.now() });
      for await (const msg of messages) this.receive(msg);
      await this.#queues.idle();
      throw new Error('the event consumer ended');
    })().catch((err: unknown) => {
      if (this.#abort.signal.aborted) return;
      this.log.error({ err }, `${pm.durable} loop ended`);
      this.#fail(err instanceof Error ? err : new Error(String(err)));
    });
    this.startTicks(false);
  }

  /** Ticks every `tickMs` (if set); `now`: the first at once as well. */
  private startTicks(now: boolean): void {
    const { pm } = this;
    const tick = () => {
      const input = { type: 'tick', now: Date.now() } as const;
      pm.evolve(pm.model, input);
      this.decideAlone(input);
    };
    if (now) tick();
    if (pm.tickMs !== undefined) this.#tick = setInterval(tick, pm.tickMs);
  }

  private get ackWaitMs(): number {
    if (this.pm.ackWaitMs === undefined) throw new Error(`${this.pm.durable} consumes events but sets no ackWaitMs`);
    return this.pm.ackWaitMs;
  }

  /** A message's inputs: the source's reading, or the log's events the catalog knows. */
  private read(msg: JsMsg): { events: readonly E[]; rejection?: undefined } | { rejection: Rejection; events?: undefined } {
    if (this.pm.source) {
      const read = this.pm.source.read(msg.data);
      return 'rejection' in read ? { rejection: read.rejection } : { events: read.events };
    }
    const read = knownEvents(this.store.decode(msg), this.catalog);
    // Without a source the inputs are the log's events (`E` defaults to `EventOf<D>`).
    return read.rejection ? { rejection: read.rejection } : { events: read.events.map(({ event }) => event as unknown as E) };
  }

  private get catalog(): EventCatalog<D> {
    if (!this.pm.catalog) throw new Error(`${this.pm.durable} consumes events but has no catalog`);
    return this.pm.catalog;
  }

  /** An observation from outside the log: folded, and decided on once the host runs (not after a stop). */
  observe(observation: O): void {
    if (this.#abort.signal.aborted) return;
    const input = { type: 'observed', observation } as unknown as Observed<O>;
    this.pm.evolve(this.pm.model, input);
    if (this.#running) this.decideAlone(input);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#tick);
    await this.#messages?.close().catch(() => undefined);
    await this.#loop;
    await this.#queues.idle();
  }

  private receive(msg: JsMsg): void {
    const read = this.read(msg);
    if (read.rejection) {
      this.#appliedSeq = Math.max(this.#appliedSeq, msg.seq);
      this.#deadLetters.setAside(msg, read.rejection);
      return;
    }
    const fresh = msg.seq > this.#appliedSeq;
    this.#appliedSeq = Math.max(this.#appliedSeq, msg.seq);
    const runs: Promise<void>[] = [];
    for (const event of read.events) {
      if (fresh) this.fold(event, msg.seq);
      for (const run of this.enqueue(this.pm.decide({ type: 'event', event }, this.pm.model))) runs.push(run);
    }
    // Most events ask for nothing (a step started, an agent registered): folded, they are done.
    if (runs.length === 0) return msg.ack();
    const heartbeat = setInterval(() => msg.working(), this.ackWaitMs / 3);
    void Promise.all(runs)
      .then(
        () => msg.ack(),
        (err: unknown) => {
          // On a clean stop the event goes straight back, so the next leader need not wait out the ack wait.
          if (this.#abort.signal.aborted) return msg.nak();
          this.log.error({ err, seq: msg.seq }, `${this.pm.durable} could not react to an event`);
          msg.nak(1_000);
        },
      )
      .finally(() => clearInterval(heartbeat));
  }

  /** Reactions no message waits for (a start, a resync, an observation): a failure is logged, and the next tick or restart decides again. */
  private decideAlone(input: { type: 'resumed' | 'tick'; now: number } | Observed<O>): void {
    for (const run of this.enqueue(this.pm.decide(input, this.pm.model))) {
      run.catch((err: unknown) => {
        if (!this.#abort.signal.aborted) this.log.error({ err, input: input.type }, `${this.pm.durable} reaction failed`);
      });
    }
  }

  /** Folds the decided commands at once (the next decision counts them), then queues each reaction behind its key. */
  private enqueue(reactions: readonly Reaction<T, O>[]): Promise<void>[] {
    const runs: Promise<void>[] = [];
    for (const reaction of reactions) {
      if (reaction.coalesce && this.#queues.busy(reaction.key)) continue;
      this.foldDecided(reaction);
      runs.push(this.#queues.run(reaction.key, () => runEffects(reaction.effects, this.#ports, reaction.key)));
    }
    return runs;
  }

  private foldDecided(reaction: Reaction<T, O>): void {
    for (const effect of reaction.effects) if (effect.kind === 'command') this.pm.evolve(this.pm.model, { type: 'decided', command: effect });
  }

  /**
   * A task's observation, within the reaction (on `key`) that asked: folded and decided on; the reactions on `key`
   * run here in order (queued behind this one they would wait for it forever), the others on their queues.
   */
  private async observeWithin(observation: O, key: string): Promise<void> {
    const input = { type: 'observed', observation } as unknown as Observed<O>;
    this.pm.evolve(this.pm.model, input);
    const reactions = this.pm.decide(input, this.pm.model);
    const here = reactions.filter((r) => r.key === key);
    const elsewhere = this.enqueue(reactions.filter((r) => r.key !== key));
    const inPlace = (async () => {
      for (const reaction of here) {
        this.foldDecided(reaction);
        await runEffects(reaction.effects, this.#ports, key);
      }
    })();
    await Promise.all([inPlace, ...elsewhere]);
  }

  /** Rebuilds the model from events this host's durable already delivered, without reacting to them again. */
  private async foldUpTo(seq: number): Promise<void> {
    if (seq === 0 || this.pm.filter === undefined || this.pm.source) return;
    const consumer = await this.store.js.consumers.get(Streams.events.name, { filter_subjects: this.pm.filter, deliver_policy: DeliverPolicy.All });
    const messages = await consumer.consume({ max_messages: 5_000 });
    try {
      for await (const m of withinReplayDeadline(messages, `${this.pm.durable} catching up`)) {
        if (m.seq <= seq) for (const event of this.read(m).events ?? []) this.fold(event, m.seq);
        this.#appliedSeq = Math.min(m.seq, seq);
        if (m.seq >= seq || m.info.pending === 0) break;
      }
    } finally {
      await messages.close();
    }
  }

  private fold(event: E, seq: number): void {
    this.pm.evolve(this.pm.model, { type: 'event', event, seq });
  }
}
