import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
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
    this.#stopped = true;
    await this.#messages?.close();
    this.flush();
    this.#db?.close();
    this.#db = undefined;
  }

  /** Replays the whole log into a new file while the old one keeps serving, then swaps them. */
  async rebuild(): Promise<void> {
    if (this.#rebuilding) throw new Error(`${this.projection.name} is already rebuilding`);
    await this.#messages?.close();
    this.#messages = undefined;
    this.flush();
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
      const seq = await replayInto(this.store, fresh, this.projection);
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

  private async consumeLive(): Promise<void> {
    const checkpoint = readCheckpoint(this.db).seq;
    const jsm = this.store.jsm;
    const existing = await jsm.consumers.info(Streams.events.name, this.durable).catch(() => undefined);
    // A durable that already acked past our checkpoint would skip messages this file never saw.
    if (existing && existing.ack_floor.stream_seq > checkpoint) await jsm.consumers.delete(Streams.events.name, this.durable);
    if (!existing || existing.ack_floor.stream_seq > checkpoint) {
      await jsm.consumers.add(Streams.events.name, {
        durable_name: this.durable,
        filter_subject: Subjects.allEvents,
        ack_policy: AckPolicy.All,
        deliver_policy: checkpoint > 0 ? DeliverPolicy.StartSequence : DeliverPolicy.All,
        ...(checkpoint > 0 ? { opt_start_seq: checkpoint + 1 } : {}),
        ack_wait: 30_000_000_000,
        max_ack_pending: 20_000,
      });
    }
    const consumer = await this.store.js.consumers.get(Streams.events.name, this.durable);
    this.#messages = await consumer.consume({
      max_messages: 2_000,
      callback: (msg) => {
        this.#pending.push(msg);
        if (this.#pending.length >= BATCH) this.flush();
        else if (!this.#flushScheduled) {
          this.#flushScheduled = true;
          setImmediate(() => this.flush());
        }
      },
    });
  }

  private flush(): void {
    this.#flushScheduled = false;
    if (this.#pending.length === 0 || !this.#db) return;
    const msgs = this.#pending;
    this.#pending = [];
    const batch: LogMessage[] = msgs.map((m) => ({ seq: m.seq, subject: m.subject, commandId: m.headers?.get('Nats-Msg-Id') ?? null, payload: m.data }));
    try {
      applyBatch(this.#db, this.projection, batch);
      msgs.at(-1)!.ack();
    } catch (err) {
      // Unacked messages come back after ack_wait; the checkpoint makes the retry exact.
      this.log.error({ err, projector: this.projection.name, firstSeq: batch[0]!.seq }, 'projection batch failed');
      if (this.#stopped) return;
      for (const m of msgs) m.nak(1_000);
    }
  }
}
