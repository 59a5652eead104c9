import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Rejection } from '../../schemas/deadLetters.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { DeadLetterQueue } from '../platform/deadLetters/deadLetterQueue.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { Logger } from '../platform/logger.ts';
import { deliveredStreamSequence } from '../platform/nats/deliveredSequence.ts';
import { DURABLE_PULL } from '../platform/nats/durablePull.ts';
import { projectEntry, type ProjectedMessage } from './applyBatch.ts';
import { BATCH, BatchWindow } from './batchWindow.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import type { ReadModelFiles } from './readModelFiles.ts';
import { ReadModelProjector, type ProjectorHost } from './readModelProjector.ts';

/** The durable every read model of the `projectors` process shares. */
export const PROJECTORS_DURABLE = 'projectors';

/**
 * Builds several read models from one durable pull consumer: every message is decoded and authenticated once, then
 * applied to each read model in one transaction per batch with its checkpoint, and the batch is acked once (AckAll).
 * Each read model keeps its own file and checkpoint; one that is rebuilt, recovering or failing leaves the session,
 * replays alone and rejoins, while the others keep being served. A message the event store did not write, or that
 * cannot be read, goes to the dead letters (under this durable) and only moves the checkpoints.
 */
export class ProjectorGroup implements ProjectorHost {
  readonly members: readonly ReadModelProjector[];
  readonly deadLetters: DeadLetterQueue;
  #messages: ConsumerMessages | undefined;
  #pending: JsMsg[] = [];
  /** The stream sequence of each message in `#pending`, read once from its ack subject (`deliveredStreamSequence`). */
  #pendingSeqs: number[] = [];
  #flushTimer: NodeJS.Timeout | undefined;
  readonly #window = new BatchWindow();
  /** A batch waiting for its dead letters to be stored; later messages wait in `#pending` until it is applied. */
  #quarantining: Promise<void> | undefined;
  #session: symbol | undefined;
  #started = false;
  #stopped = false;
  /** The last sequence the session applied: every live read model's checkpoint is at least this. */
  #position = 0;
  #expectedNext = 1;
  #acceptedGap = 0;
  /** Read models finishing a catch-up: nothing is applied while any holds the session. */
  #holds = 0;

  constructor(
    private readonly store: EventStore,
    readModels: readonly { projection: Projection; files: ReadModelFiles }[],
    private readonly log: Logger,
    readonly durable: string = PROJECTORS_DURABLE,
  ) {
    this.deadLetters = new DeadLetterQueue(store.nc, durable, log);
    this.members = readModels.map(({ projection, files }) => new ReadModelProjector(store, projection, files, this, log));
  }

  get started(): boolean {
    return this.#started;
  }

  member(name: string): ReadModelProjector {
    const found = this.members.find((m) => m.projection.name === name);
    if (!found) throw new Error(`no read model ${name} in ${this.durable}`);
    return found;
  }

  /**
   * Opens every read model and starts consuming from the furthest checkpoint among them; a read model behind it (a
   * crash between two read models' transactions, a new read model) catches up alone, a broken one is rebuilt.
   */
  async start(): Promise<void> {
    const checkpoints: (number | undefined)[] = [];
    for (const m of this.members) checkpoints.push(m.opened ? (await m.status()).checkpoint : await m.open());
    const usable = checkpoints.filter((c) => c !== undefined);
    this.#position = usable.length > 0 ? Math.max(...usable) : await this.store.streamLastSequence();
    this.#started = true;
    this.members.forEach((m, i) => checkpoints[i] !== undefined && m.join(this.#position));
    await this.consumeLive();
  }

  async stop(): Promise<void> {
    this.flush();
    await this.#quarantining;
    this.#stopped = true;
    this.#session = undefined;
    clearTimeout(this.#flushTimer);
    await this.#messages?.close();
    for (const m of this.members) await m.stop();
  }

  async hold(): Promise<number> {
    this.#holds++;
    while (this.#quarantining) await this.#quarantining;
    // Before the session starts there is nothing to catch up with: `start` joins the read model at its checkpoint.
    return this.#started ? this.#position : -1;
  }

  release(): void {
    this.#holds--;
    this.flush();
  }

  /**
   * Starts a consumption session from just past the position. The durable is recreated every time: the SQLite
   * checkpoints are the only truth, and a durable whose server-side position moved past them (messages delivered to
   * a session that died before applying them) would otherwise let a later AckAll skip them for good.
   */
  private async consumeLive(): Promise<void> {
    const from = this.#position;
    const jsm = this.store.jsm;
    await jsm.consumers.delete(Streams.events.name, this.durable).catch(() => undefined);
    await jsm.consumers.add(Streams.events.name, {
      durable_name: this.durable,
      filter_subject: Subjects.allEvents,
      ack_policy: AckPolicy.All,
      deliver_policy: from > 0 ? DeliverPolicy.StartSequence : DeliverPolicy.All,
      ...(from > 0 ? { opt_start_seq: from + 1 } : {}),
      ack_wait: 30_000_000_000,
      max_ack_pending: 20_000,
    });
    const consumer = await this.store.js.consumers.get(Streams.events.name, this.durable);
    const session = Symbol('session');
    this.#session = session;
    this.#expectedNext = from + 1;
    this.#pending = [];
    this.#pendingSeqs = [];
    this.#messages = await consumer.consume({
      max_messages: 2_000,
      // A durable deleted under us ends the session; it is then recreated from the position.
      ...DURABLE_PULL,
      callback: (msg) => {
        if (this.#session !== session) return;
        // The filter covers the whole stream, so sequences arrive contiguous. A jump means a message was lost on
        // the way: start over from the position. A jump seen twice in a row is a real hole (deleted messages).
        const seq = deliveredStreamSequence(msg);
        if (seq > this.#expectedNext && seq !== this.#acceptedGap) {
          this.#acceptedGap = seq;
          void this.restartLive('sequence gap', 0);
          return;
        }
        this.#expectedNext = seq + 1;
        this.#pending.push(msg);
        this.#pendingSeqs.push(seq);
        if (this.#pending.length >= BATCH) this.flush();
        else this.#flushTimer ??= setTimeout(() => this.flush(), this.#window.forFirstMessage());
      },
    });
    void this.#messages.closed().then(() => {
      if (this.#session === session) void this.restartLive('the consumer ended', 1_000);
    });
  }

  /** Ends the current session without acking what it holds, then resumes from the position after `delayMs`. */
  private async restartLive(reason: string, delayMs: number): Promise<void> {
    if (this.#stopped || this.#session === undefined) return;
    this.log.warn({ projector: this.durable, reason, position: this.#position }, 'restarting consumption from the position');
    this.#session = undefined;
    this.#pending = [];
    this.#pendingSeqs = [];
    await this.#messages?.close();
    await sleep(delayMs);
    if (!this.#stopped)
      await this.consumeLive().catch((err: unknown) => {
        this.log.error({ err, projector: this.durable }, 'could not resume consumption; retrying');
        this.#session = Symbol('retry');
        void this.restartLive('resume failed', 1_000);
      });
  }

  /**
   * Applies what arrived, decoding and authenticating each message once for every read model. A batch with messages
   * to dead-letter waits for their entries first; meanwhile later messages wait.
   */
  private flush(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#pending.length === 0 || this.#session === undefined || this.#quarantining || this.#holds > 0) return;
    const msgs = this.#pending;
    const seqs = this.#pendingSeqs;
    const session = this.#session;
    this.#pending = [];
    this.#pendingSeqs = [];
    this.#window.flushed();
    const entries = msgs.map((m, i) => projectEntry(this.store.decode(m, seqs[i])));
    if (entries.every((e) => !e.rejection)) return this.apply(session, msgs, entries);
    this.#quarantining = this.quarantine(msgs, entries)
      .then(
        () => this.apply(session, msgs, entries),
        (err: unknown) => {
          this.log.error({ err, projector: this.durable }, 'could not dead-letter a message; resuming from the position');
          void this.restartLive('dead letter failed', 1_000);
        },
      )
      .finally(() => {
        this.#quarantining = undefined;
        this.flush();
      });
  }

  private async quarantine(msgs: readonly JsMsg[], entries: readonly { message: ProjectedMessage; rejection?: Rejection }[]): Promise<void> {
    for (const [i, { message, rejection }] of entries.entries()) {
      if (rejection)
        await this.deadLetters.quarantine({ stream: Streams.events.name, seq: message.seq, subject: message.subject, data: msgs[i]!.data }, rejection);
    }
  }

  /** Every live read model applies the batch (one that fails leaves the session on its own); then one ack. */
  private apply(session: symbol, msgs: readonly JsMsg[], entries: readonly { message: ProjectedMessage }[]): void {
    if (this.#session !== session) return;
    const messages = entries.map((e) => e.message);
    for (const m of this.members) m.applyLive(messages);
    this.#position = messages.at(-1)!.seq;
    msgs.at(-1)!.ack();
  }
}
