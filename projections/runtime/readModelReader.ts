import { existsSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { PlatformError } from '../../services/platform/errors.ts';
import { openReader, readCheckpoint } from './readModelDatabase.ts';
import type { ReadModelFiles } from './readModelFiles.ts';

/**
 * Query-side access to a read model that a projector (maybe in another process) writes. Follows `CURRENT`, so a
 * rebuild's swap is picked up by the next query without a restart.
 */
export class ReadModelReader {
  #db: Database | undefined;
  #pointerStamp = '';

  constructor(readonly files: ReadModelFiles) {}

  get name(): string {
    return this.files.name;
  }

  db(): Database {
    const stamp = existsSync(this.files.pointer) ? `${statSync(this.files.pointer).mtimeMs}:${statSync(this.files.pointer).ino}` : '';
    if (!this.#db || stamp !== this.#pointerStamp) {
      if (!stamp) throw new PlatformError('UNAVAILABLE', `read model ${this.name} has not been built yet`);
      const file = this.files.current();
      if (!existsSync(file)) throw new PlatformError('UNAVAILABLE', `read model ${this.name} has not been built yet`);
      this.#db?.close();
      this.#db = openReader(file);
      this.#pointerStamp = stamp;
    }
    return this.#db;
  }

  checkpoint(): number {
    return readCheckpoint(this.db()).seq;
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
  }
}
