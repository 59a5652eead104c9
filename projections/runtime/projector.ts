import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { applyBatch, type LogMessage } from './applyBatch.ts';
import type { Projection } from './projection.ts';
import { openWriter, readCheckpoint } from './readModelDatabase.ts';
import type { ReadModelFiles } from './readModelFiles.ts';
import { replayInto } from './replay.ts';

const BATCH = 256;

export interface ProjectorStatus {
  name: string;
  checkpoint: number;
  streamLastSeq: number;
  lag: number;
  rebuilding: boolean;
}

/**
 * Builds one read model from a durable pull consumer: `consume()`, batched SQLite transactions that store the
 * checkpoint with the rows, then one ack per batch (AckAll). Any number of restarts, redeliveries or duplicate
 * deliveries leave the same rows.
 */
export class Projector {
  readonly durable: string;
  #db: Database | undefined;
  #messages: ConsumerMessages | undefined;
  #pending: JsMsg[] = [];
  #flushScheduled = false;
  #rebuilding = false;
  #stopped = false;
  #session: symbol | undefined;
  #expectedNext = 1;
  #acceptedGap = 0;

  constructor(
    private readonly store: EventStore,
    readonly projection: Projection,
    private readonly files: ReadModelFiles,
    private readonly log: Logger,
  ) {
    this.durable = `projector_${projection.name}`;
  }

  get db(): Database {
    if (!this.#db) throw new Error(`${this.projection.name} projector is not started`);
    return this.#db;
  }

  async start(): Promise<void> {
    this.#db = openWriter(this.files.current(), this.projection);
    if (!(await this.checkpointMatchesLog())) {
      this.log.warn({ projector: this.projection.name }, 'checkpoint does not match the log; rebuilding');
      await this.rebuildNow();
    }
    await this.consumeLive();
  }

  async stop(): Promise<void> {
    this.flush();
    this.#stopped = true;
    this.#session = undefined;
    await this.#messages?.close();
    this.#db?.close();
    this.#db = undefined;
  }

  /** Replays the whole log into a new file while the old one keeps serving, then swaps them. */
  async rebuild(): Promise<void> {
    if (this.#rebuilding) throw new Error(`${this.projection.name} is already rebuilding`);
    this.flush();
    this.#session = undefined;
    await this.#messages?.close();
    this.#messages = undefined;
    await this.rebuildNow();
    await this.consumeLive();
  }

  async status(): Promise<ProjectorStatus> {
    const streamLastSeq = await this.store.streamLastSequence();
    const checkpoint = this.#db ? readCheckpoint(this.#db).seq : 0;
    return { name: this.projection.name, checkpoint, streamLastSeq, lag: Math.max(0, streamLastSeq - checkpoint), rebuilding: this.#rebuilding };
  }

  private async rebuildNow(): Promise<void> {
    this.#rebuilding = true;
    try {
      const file = this.files.newFile();
      const fresh = openWriter(file, this.projection);
      const started = Date.now();
      // A half-built file is thrown away on a crash and rebuilt, so the replay need not wait for the disk.
      fresh.pragma('synchronous = OFF');
      const seq = await replayInto(this.store, fresh, this.projection);
      fresh.pragma('synchronous = NORMAL');
      this.files.swapTo(file);
      this.#db?.close();
      this.#db = fresh;
      this.log.info({ projector: this.projection.name, seq, ms: Date.now() - started }, 'rebuild complete');
    } finally {
      this.#rebuilding = false;
    }
  }

  /** A checkpoint is trusted only if the log still holds the same message at that sequence. */
  private async checkpointMatchesLog(): Promise<boolean> {
    const checkpoint = readCheckpoint(this.db);
    if (checkpoint.seq === 0) return true;
    const stored = await this.store.readAt(checkpoint.seq).catch(() => undefined);
    return stored !== undefined && stored.batch.events[0]?.metadata.commandId === checkpoint.commandId;
  }

  /**
   * Starts a consumption session from just past the checkpoint. The durable is recreated every time: the SQLite
   * checkpoint is the only truth, and a durable whose server-side position moved past it (messages delivered to a
   * session that died before applying them) would otherwise let a later AckAll skip them for good.
   */
  private async consumeLive(): Promise<void> {
    const checkpoint = readCheckpoint(this.db).seq;
    const jsm = this.store.jsm;
    await jsm.consumers.delete(Streams.events.name, this.durable).catch(() => undefined);
    await jsm.consumers.add(Streams.events.name, {
      durable_name: this.durable,
      filter_subject: Subjects.allEvents,
      ack_policy: AckPolicy.All,
      deliver_policy: checkpoint > 0 ? DeliverPolicy.StartSequence : DeliverPolicy.All,
      ...(checkpoint > 0 ? { opt_start_seq: checkpoint + 1 } : {}),
      ack_wait: 30_000_000_000,
      max_ack_pending: 20_000,
    });
    const consumer = await this.store.js.consumers.get(Streams.events.name, this.durable);
    const session = Symbol('session');
    this.#session = session;
    this.#expectedNext = checkpoint + 1;
    this.#pending = [];
    this.#messages = await consumer.consume({
      max_messages: 2_000,
      callback: (msg) => {
        if (this.#session !== session) return;
        // The filter covers the whole stream, so sequences arrive contiguous. A jump means a message was lost on
        // the way: start over from the checkpoint. A jump seen twice in a row is a real hole (deleted messages).
        if (msg.seq > this.#expectedNext && msg.seq !== this.#acceptedGap) {
          this.#acceptedGap = msg.seq;
          void this.restartLive('sequence gap', 0);
          return;
        }
        this.#expectedNext = msg.seq + 1;
        this.#pending.push(msg);
        if (this.#pending.length >= BATCH) this.flush();
        else if (!this.#flushScheduled) {
          this.#flushScheduled = true;
          setImmediate(() => this.flush());
        }
      },
    });
  }

  /** Ends the current session without acking what it holds, then resumes from the checkpoint after `delayMs`. */
  private async restartLive(reason: string, delayMs: number): Promise<void> {
    if (this.#stopped || this.#session === undefined) return;
    this.log.warn({ projector: this.projection.name, reason, checkpoint: readCheckpoint(this.db).seq }, 'restarting consumption from the checkpoint');
    this.#session = undefined;
    this.#pending = [];
    await this.#messages?.close();
    await sleep(delayMs);
    if (!this.#stopped && !this.#rebuilding) await this.consumeLive().catch((err: unknown) => {
      this.log.error({ err, projector: this.projection.name }, 'could not resume consumption; retrying');
      this.#session = Symbol('retry');
      void this.restartLive('resume failed', 1_000);
    });
  }

  private flush(): void {
    this.#flushScheduled = false;
    if (this.#pending.length === 0 || !this.#db || this.#session === undefined) return;
    const msgs = this.#pending;
    this.#pending = [];
    const batch: LogMessage[] = msgs.map((m) => ({ seq: m.seq, subject: m.subject, commandId: m.headers?.get('Nats-Msg-Id') ?? null, payload: m.data }));
    try {
      applyBatch(this.#db, this.projection, batch);
      msgs.at(-1)!.ack();
    } catch (err) {
      // Never ack past a batch that did not apply: drop the session and retry from the checkpoint.
      this.log.error({ err, projector: this.projection.name, firstSeq: batch[0]!.seq }, 'projection batch failed');
      void this.restartLive('batch failed', 1_000);
    }
  }
}
