import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { DeadLetterQueue } from '../../services/platform/deadLetters/deadLetterQueue.ts';
import type { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { applyBatch, projectEntry, type ProjectedMessage } from './applyBatch.ts';
import type { Rejection } from '../../schemas/deadLetters.ts';
import type { Projection } from './projection.ts';
import { isCorruptDatabase } from '../../services/platform/corruptDatabase.ts';
import { openWriter, readCheckpoint } from './readModelDatabase.ts';
import { fileIdentity, hasDatabaseHeader, type ReadModelFiles } from './readModelFiles.ts';
import { replayInto } from './replay.ts';

const BATCH = 256;
/** How often the live file is checked for having been deleted, replaced or overwritten while no event arrives. */
const FILE_CHECK_MS = 2_000;

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
 * deliveries leave the same rows. A message the event store did not write, or cannot be read, goes to the dead
 * letters and only moves the checkpoint. A live file that is deleted, replaced or corrupt is rebuilt from the log
 * in the background; meanwhile this read model alone is unavailable.
 */
export class Projector {
  readonly durable: string;
  readonly #deadLetters: DeadLetterQueue;
  #db: Database | undefined;
  /** The live file and its identity when opened: a different (or no) file at that path means it was replaced. */
  #file: { path: string; identity: string | undefined } | undefined;
  #messages: ConsumerMessages | undefined;
  #pending: JsMsg[] = [];
  #flushScheduled = false;
  /** A batch waiting for its dead letters to be stored; later messages wait in `#pending` until it is applied. */
  #quarantining: Promise<void> | undefined;
  #rebuilding = false;
  #recovering: Promise<void> | undefined;
  #stopped = false;
  #session: symbol | undefined;
  #expectedNext = 1;
  #acceptedGap = 0;
  #fileCheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: EventStore,
    readonly projection: Projection,
    private readonly files: ReadModelFiles,
    private readonly log: Logger,
  ) {
    this.durable = `projector_${projection.name}`;
    this.#deadLetters = new DeadLetterQueue(store.nc, this.durable, log);
  }

  get db(): Database {
    if (!this.#db) throw new Error(`${this.projection.name} projector is not started`);
    return this.#db;
  }

  /** Resolves once the projector consumes; a corrupt live file is rebuilt in the background instead. */
  async start(): Promise<void> {
    const path = this.files.current();
    try {
      this.open(path);
    } catch (err) {
      if (!isCorruptDatabase(err)) throw err;
      this.watchFile();
      void this.recover('the live file is not a sound database', err);
      return;
    }
    if (!(await this.checkpointMatchesLog())) {
      this.log.warn({ projector: this.projection.name }, 'checkpoint does not match the log; rebuilding');
      await this.rebuildNow();
    }
    await this.consumeLive();
    this.watchFile();
  }

  async stop(): Promise<void> {
    this.flush();
    await this.#quarantining;
    this.#stopped = true;
    this.#session = undefined;
    clearInterval(this.#fileCheck);
    await this.#messages?.close();
    await this.#recovering;
    this.#db?.close();
    this.#db = undefined;
  }

  /** Replays the whole log into a new file while the old one keeps serving, then swaps them. */
  async rebuild(): Promise<void> {
    if (this.#rebuilding || this.#recovering) throw new Error(`${this.projection.name} is already rebuilding`);
    await this.endSession();
    await this.rebuildNow();
    await this.consumeLive();
  }

  async status(): Promise<ProjectorStatus> {
    const streamLastSeq = await this.store.streamLastSequence();
    const checkpoint = this.#recovering ? 0 : (this.checkpointOrUndefined() ?? 0);
    return { name: this.projection.name, checkpoint, streamLastSeq, lag: Math.max(0, streamLastSeq - checkpoint), rebuilding: this.#rebuilding };
  }

  /** The checkpoint, or undefined when there is no usable file (a file that broke under us is about to be rebuilt). */
  private checkpointOrUndefined(): number | undefined {
    try {
      return this.#db ? readCheckpoint(this.#db).seq : undefined;
    } catch {
      return undefined;
    }
  }

  private open(path: string): void {
    const db = openWriter(path, this.projection);
    try {
      readCheckpoint(db);
    } catch (err) {
      db.close();
      throw err;
    }
    this.#db = db;
    this.#file = { path, identity: fileIdentity(path) };
  }

  private async endSession(): Promise<void> {
    this.flush();
    await this.#quarantining;
    this.#session = undefined;
    this.#pending = [];
    await this.#messages?.close();
    this.#messages = undefined;
  }

  private async rebuildNow(): Promise<void> {
    this.#rebuilding = true;
    try {
      const file = this.files.newFile();
      const fresh = openWriter(file, this.projection);
      const started = Date.now();
      // A half-built file is thrown away on a crash and rebuilt, so the replay need not wait for the disk.
      fresh.pragma('synchronous = OFF');
      const seq = await replayInto(this.store, fresh, this.projection, this.#deadLetters);
      fresh.pragma('synchronous = NORMAL');
      this.files.swapTo(file);
      this.#db?.close();
      this.#db = fresh;
      this.#file = { path: file, identity: fileIdentity(file) };
      this.log.info({ projector: this.projection.name, seq, ms: Date.now() - started }, 'rebuild complete');
    } finally {
      this.#rebuilding = false;
    }
  }

  /**
   * The live file cannot be trusted any more (gone, replaced, corrupt): drop it, so readers answer UNAVAILABLE rather
   * than serve it, and rebuild from the log until that succeeds. Only this read model is affected.
   */
  private recover(reason: string, err?: unknown): Promise<void> {
    if (this.#recovering || this.#stopped) return this.#recovering ?? Promise.resolve();
    this.log.error({ err, projector: this.projection.name, file: this.#file?.path, reason }, 'read model file unusable; rebuilding it from the log');
    this.#recovering = (async () => {
      await this.endSession();
      this.#db?.close();
      this.#db = undefined;
      this.files.remove(this.#file?.path ?? this.files.current());
      this.#file = undefined;
      for (let pause = 500; !this.#stopped; pause = Math.min(pause * 2, 10_000)) {
        try {
          await this.rebuildNow();
          if (!this.#stopped) await this.consumeLive();
          return;
        } catch (retryErr) {
          this.log.error({ err: retryErr, projector: this.projection.name }, 'rebuild failed; retrying');
          await sleep(pause);
        }
      }
    })().finally(() => (this.#recovering = undefined));
    return this.#recovering;
  }

  private watchFile(): void {
    this.#fileCheck = setInterval(() => this.checkFile(), FILE_CHECK_MS);
  }

  /** Notices a live file that was deleted, replaced or overwritten even while no event arrives to write. */
  private checkFile(): void {
    const file = this.#file;
    if (!file || !this.#db || this.#rebuilding || this.#recovering || this.#stopped) return;
    const identity = fileIdentity(file.path);
    if (identity === undefined) void this.recover('the live file was deleted');
    else if (identity !== file.identity) void this.recover('the live file was replaced');
    else if (!hasDatabaseHeader(file.path)) void this.recover('the live file was overwritten');
  }

  /** A checkpoint is trusted only if the log still holds the same message at that sequence. */
  private async checkpointMatchesLog(): Promise<boolean> {
    const checkpoint = readCheckpoint(this.db);
    if (checkpoint.seq === 0) return true;
    const stored = await this.store.readAt(checkpoint.seq).catch(() => undefined);
    return stored !== undefined && stored.messageId === checkpoint.messageId;
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
      // A durable deleted under us ends the session; it is then recreated from the checkpoint.
      abort_on_missing_resource: true,
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
    void this.#messages.closed().then(() => {
      if (this.#session === session) void this.restartLive('the consumer ended', 1_000);
    });
  }

  /** Ends the current session without acking what it holds, then resumes from the checkpoint after `delayMs`. */
  private async restartLive(reason: string, delayMs: number): Promise<void> {
    if (this.#stopped || this.#session === undefined) return;
    this.log.warn({ projector: this.projection.name, reason, checkpoint: this.checkpointOrUndefined() }, 'restarting consumption from the checkpoint');
    this.#session = undefined;
    this.#pending = [];
    await this.#messages?.close();
    await sleep(delayMs);
    if (!this.#stopped && !this.#rebuilding && !this.#recovering)
      await this.consumeLive().catch((err: unknown) => {
        this.log.error({ err, projector: this.projection.name }, 'could not resume consumption; retrying');
        this.#session = Symbol('retry');
        void this.restartLive('resume failed', 1_000);
      });
  }

  /**
   * Applies what arrived, in the consumer's callback (so a slow read model slows the consumer down rather than queueing
   * without bound). A batch with messages to dead-letter waits for their entries first; meanwhile later messages wait.
   */
  private flush(): void {
    this.#flushScheduled = false;
    if (this.#pending.length === 0 || this.#session === undefined || this.#quarantining) return;
    const msgs = this.#pending;
    const session = this.#session;
    this.#pending = [];
    const entries = msgs.map((m) => projectEntry(this.store.decode(m)));
    if (entries.every((e) => !e.rejection)) return this.apply(session, msgs, entries);
    this.#quarantining = this.quarantine(msgs, entries)
      .then(
        () => this.apply(session, msgs, entries),
        (err: unknown) => {
          this.log.error({ err, projector: this.projection.name }, 'could not dead-letter a message; resuming from the checkpoint');
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
        await this.#deadLetters.quarantine({ stream: Streams.events.name, seq: message.seq, subject: message.subject, data: msgs[i]!.data }, rejection);
    }
  }

  private apply(session: symbol, msgs: readonly JsMsg[], entries: readonly { message: ProjectedMessage }[]): void {
    if (this.#session !== session || !this.#db) return;
    try {
      applyBatch(
        this.#db,
        this.projection,
        entries.map((e) => e.message),
      );
      msgs.at(-1)!.ack();
    } catch (err) {
      if (isCorruptDatabase(err)) return void this.recover('the live file is corrupt', err);
      // Never ack past a batch that did not apply: drop the session and retry from the checkpoint.
      this.log.error({ err, projector: this.projection.name, firstSeq: msgs[0]!.seq }, 'projection batch failed');
      void this.restartLive('batch failed', 1_000);
    }
  }
}
