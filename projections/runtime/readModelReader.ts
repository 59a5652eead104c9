import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { PlatformError } from '../../schemas/platformError.ts';
import { isCorruptDatabase } from '../../schemas/corruptDatabase.ts';
import { openReader, readCheckpoint } from './readModelDatabase.ts';
import { fileIdentity } from './fileIdentity.ts';

/**
 * Where a read model's live file is named: its name, the `CURRENT` pointer and the file that pointer names. Its
 * projector's `ReadModelFiles` (`services/projectors/readModelFiles.ts`) is one; the reader asks `current()` only once
 * the pointer exists, so it never creates one.
 */
export interface ReadModelLocation {
  readonly name: string;
  readonly pointer: string;
  current(): string;
}

/**
 * Query-side access to a read model that a projector (maybe in another process) writes. Every query checks which
 * file is live: the one `CURRENT` names, and that file's identity (device and inode). A rebuild's swap, a file
 * deleted or replaced under it, and a file recreated at the same path are all picked up by the next query. Without a
 * usable file the read model is UNAVAILABLE (HTTP 503), while the others keep serving.
 */
export class ReadModelReader {
  #db: Database | undefined;
  #opened = '';
  /** The file `CURRENT` named, by the pointer's identity: a swap renames a new pointer into place. */
  #pointer: { identity: string; file: string } | undefined;

  constructor(readonly files: ReadModelLocation) {}

  get name(): string {
    return this.files.name;
  }

  db(): Database {
    const file = this.liveFile();
    const identity = file && fileIdentity(file);
    if (!file || !identity) {
      this.close();
      throw new PlatformError('UNAVAILABLE', `read model ${this.name} is being built; try again shortly`);
    }
    const opened = `${file}:${identity}`;
    if (!this.#db || opened !== this.#opened) {
      this.close();
      this.#db = openReader(file);
      this.#opened = opened;
    }
    return this.#db;
  }

  private liveFile(): string | undefined {
    const identity = fileIdentity(this.files.pointer);
    if (identity === undefined) return undefined;
    if (this.#pointer?.identity !== identity) this.#pointer = { identity, file: this.files.current() };
    return this.#pointer.file;
  }

  /**
   * Runs a query on the live file; a file that is not a sound database (being rebuilt by its projector) answers
   * UNAVAILABLE rather than an internal error.
   */
  query<T>(read: (db: Database) => T): T {
    try {
      return read(this.db());
    } catch (err) {
      if (!isCorruptDatabase(err)) throw err;
      this.close();
      throw new PlatformError('UNAVAILABLE', `read model ${this.name} is damaged and being rebuilt; try again shortly`, { cause: err });
    }
  }

  checkpoint(): number {
    return this.query(readCheckpoint).seq;
  }

  /** Read-your-writes: resolves once the model has applied `minSeq`, or fails with READ_MODEL_BEHIND. */
  async waitFor(minSeq: number | undefined, timeoutMs: number): Promise<void> {
    if (minSeq === undefined) return;
    const deadline = Date.now() + timeoutMs;
    for (let pause = 2; this.checkpoint() < minSeq; pause = Math.min(pause * 2, 50)) {
      if (Date.now() >= deadline) {
        throw new PlatformError('READ_MODEL_BEHIND', `read model ${this.name} is at ${this.checkpoint()}, not yet at ${minSeq}`);
      }
      await sleep(pause);
    }
  }

  close(): void {
    this.#db?.close();
    this.#db = undefined;
    this.#opened = '';
  }
}
