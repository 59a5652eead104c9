import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import type { DeadLetterQueue } from '../platform/deadLetters/deadLetterQueue.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { Logger } from '../platform/logger.ts';
import { isCorruptDatabase } from '../../schemas/corruptDatabase.ts';
import { applyBatch, type ProjectedMessage } from './applyBatch.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import { openWriter, readCheckpoint } from '../../projections/runtime/readModelDatabase.ts';
import { fileIdentity } from '../../projections/runtime/fileIdentity.ts';
import { hasDatabaseHeader, type ReadModelFiles } from './readModelFiles.ts';
import { replayInto } from './replay.ts';

/** How often the live file is checked for having been deleted, replaced or overwritten while no event arrives. */
const FILE_CHECK_MS = 2_000;

export interface ProjectorStatus {
  name: string;
  checkpoint: number;
  streamLastSeq: number;
  lag: number;
  rebuilding: boolean;
}

/** What a read model needs from the consumer session that feeds it (a `ProjectorGroup`). */
export interface ProjectorHost {
  readonly durable: string;
  readonly deadLetters: DeadLetterQueue;
  /**
   * Holds the live session still (nothing is applied until `release`) and resolves with the last sequence it applied:
   * a read model that has replayed up to there may join without missing a message.
   */
  hold(): Promise<number>;
  release(): void;
}

/**
 * One read model fed by a shared consumer session. While `live`, the session applies each batch to it in one
 * transaction with its checkpoint. Otherwise (being rebuilt, recovering a broken file, catching up after a failed
 * batch) it replays the log from its own checkpoint through an ordered consumer and rejoins the session once it has
 * reached the session's position; the other read models keep being served meanwhile.
 */
export class ReadModelProjector {
  #db: Database | undefined;
  /** The live file and its identity when opened: a different (or no) file at that path means it was replaced. */
  #file: { path: string; identity: string | undefined } | undefined;
  #live = false;
  #rebuilding = false;
  /** Replaying towards the session (after a rebuild, a failed batch or a broken file); undefined while live. */
  #detached: Promise<void> | undefined;
  #stopped = false;
  #fileCheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: EventStore,
    readonly projection: Projection,
    private readonly files: ReadModelFiles,
    private readonly host: ProjectorHost,
    private readonly log: Logger,
  ) {}

  get durable(): string {
    return this.host.durable;
  }

  get db(): Database {
    if (!this.#db) throw new Error(`${this.projection.name} projector is not started`);
    return this.#db;
  }

  get live(): boolean {
    return this.#live && !this.#stopped;
  }

  /**
   * Opens the live file: resolves its checkpoint, or undefined when the file is unusable (it is then rebuilt in the
   * background) or was rebuilt because its checkpoint did not match the log.
   */
  async open(): Promise<number | undefined> {
    this.#fileCheck ??= setInterval(() => this.checkFile(), FILE_CHECK_MS);
    try {
      this.openFile(this.files.current());
    } catch (err) {
      if (!isCorruptDatabase(err)) throw err;
      void this.recover('the live file is not a sound database', err);
      return undefined;
    }
    if (!(await this.checkpointMatchesLog())) {
      this.log.warn({ projector: this.projection.name }, 'checkpoint does not match the log; rebuilding');
      await this.rebuildNow();
    }
    return readCheckpoint(this.db).seq;
  }

  /** Joins the session at `position` directly when the checkpoint is there, otherwise catches up first. */
  join(position: number): void {
    this.#fileCheck ??= setInterval(() => this.checkFile(), FILE_CHECK_MS);
    if (this.#stopped || this.#detached) return;
    if (readCheckpoint(this.db).seq === position) this.#live = true;
    else this.detach(() => this.catchUp(), 0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#live = false;
    clearInterval(this.#fileCheck);
    await this.#detached;
    this.#db?.close();
    this.#db = undefined;
  }

  /** Replays the whole log into a new file while the old one keeps serving, swaps them, then rejoins the session. */
  async rebuild(): Promise<void> {
    if (this.#rebuilding || this.#detached) throw new Error(`${this.projection.name} is already rebuilding`);
    this.#live = false;
    const done = this.rebuildNow().then(() => this.catchUp());
    const tracked = done.catch(() => undefined);
    this.#detached = tracked;
    try {
      await done;
    } catch (err) {
      // The old file (if any) keeps serving: rejoin with it, and let the caller know the rebuild failed.
      this.#detached = undefined;
      if (this.#db) this.detach(() => this.catchUp(), 1_000);
      throw err;
    } finally {
      if (this.#detached === tracked) this.#detached = undefined;
    }
  }

  /** Whether a file is open (a rebuild run before the session started opens one). */
  get opened(): boolean {
    return this.#db !== undefined;
  }

  async status(): Promise<ProjectorStatus> {
    const streamLastSeq = await this.store.streamLastSequence();
    const checkpoint = this.checkpointOrUndefined() ?? 0;
    return { name: this.projection.name, checkpoint, streamLastSeq, lag: Math.max(0, streamLastSeq - checkpoint), rebuilding: this.#rebuilding };
  }

  /** Applies a batch of the live session in one transaction; a read model that cannot leaves the session and retries alone. */
  applyLive(messages: readonly ProjectedMessage[]): void {
    if (!this.live || !this.#db) return;
    try {
      applyBatch(this.#db, this.projection, messages);
    } catch (err) {
      if (isCorruptDatabase(err)) return void this.recover('the live file is corrupt', err);
      // Never move past a batch that did not apply: replay from the checkpoint, alone, until it does.
      this.log.error({ err, projector: this.projection.name, firstSeq: messages[0]?.seq }, 'projection batch failed; catching up alone');
      this.detach(() => this.catchUp(), 1_000);
    }
  }

  /** The checkpoint, or undefined when there is no usable file (a file that broke under us is about to be rebuilt). */
  private checkpointOrUndefined(): number | undefined {
    try {
      return this.#db ? readCheckpoint(this.#db).seq : undefined;
    } catch {
      return undefined;
    }
  }

  private openFile(path: string): void {
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

  /** Leaves the session and runs `work` (retried with a growing pause until it succeeds) after `delayMs`. */
  private detach(work: () => Promise<void>, delayMs: number): void {
    this.#live = false;
    if (this.#detached || this.#stopped) return;
    this.#detached = (async () => {
      await sleep(delayMs);
      for (let pause = 500; !this.#stopped; pause = Math.min(pause * 2, 10_000)) {
        try {
          return await work();
        } catch (err) {
          this.log.error({ err, projector: this.projection.name }, 'read model could not catch up; retrying');
          if (isCorruptDatabase(err) && this.#db) {
            this.dropFile();
            work = () => this.rebuildNow().then(() => this.catchUp());
          }
          await sleep(pause);
        }
      }
    })().finally(() => (this.#detached = undefined));
  }

  /**
   * Replays from the checkpoint up to the stream's end, then once more with the session held still, so that no
   * message falls between the replay and the session; joins it then.
   */
  private async catchUp(): Promise<void> {
    await replayInto(this.store, this.db, this.projection, this.host.deadLetters);
    if (this.#stopped) return;
    const position = await this.host.hold();
    try {
      if (readCheckpoint(this.db).seq < position) await replayInto(this.store, this.db, this.projection, this.host.deadLetters);
      this.#live = !this.#stopped;
    } finally {
      this.host.release();
    }
  }

  private async rebuildNow(): Promise<void> {
    this.#rebuilding = true;
    try {
      const file = this.files.newFile();
      const fresh = openWriter(file, this.projection);
      const started = Date.now();
      // A half-built file is thrown away on a crash and rebuilt, so the replay need not wait for the disk.
      fresh.pragma('synchronous = OFF');
      const seq = await replayInto(this.store, fresh, this.projection, this.host.deadLetters);
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
  private recover(reason: string, err?: unknown): void {
    if (this.#detached || this.#stopped) return;
    this.log.error({ err, projector: this.projection.name, file: this.#file?.path, reason }, 'read model file unusable; rebuilding it from the log');
    this.dropFile();
    this.detach(() => this.rebuildNow().then(() => this.catchUp()), 0);
  }

  /** Closes and removes the live file, so that readers answer UNAVAILABLE until a rebuild swaps a new one in. */
  private dropFile(): void {
    this.#live = false;
    this.#db?.close();
    this.#db = undefined;
    this.files.remove(this.#file?.path ?? this.files.current());
    this.#file = undefined;
  }

  /** Notices a live file that was deleted, replaced or overwritten even while no event arrives to write. */
  private checkFile(): void {
    const file = this.#file;
    if (!file || !this.#db || this.#rebuilding || this.#detached || this.#stopped) return;
    const identity = fileIdentity(file.path);
    if (identity === undefined) this.recover('the live file was deleted');
    else if (identity !== file.identity) this.recover('the live file was replaced');
    else if (!hasDatabaseHeader(file.path)) this.recover('the live file was overwritten');
  }

  /** A checkpoint is trusted only if the log still holds the same message at that sequence. */
  private async checkpointMatchesLog(): Promise<boolean> {
    const checkpoint = readCheckpoint(this.db);
    if (checkpoint.seq === 0) return true;
    const stored = await this.store.readAt(checkpoint.seq).catch(() => undefined);
    return stored !== undefined && stored.messageId === checkpoint.messageId;
  }
}
