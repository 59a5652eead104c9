import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export type JournalEntry =
  | { state: 'started'; commandId: string; kind: string; destructive: boolean; startedAtMs: number }
  | { state: 'finished'; commandId: string; kind: string; destructive: boolean; startedAtMs: number; resultBytes: Uint8Array };

interface Row {
  command_id: string;
  kind: string;
  destructive: number;
  started_at_ms: number;
  result: Buffer | null;
}

/**
 * The write-ahead record of what this agent executed (`<stateDir>/journal.db`). `started` is durable before a
 * command runs and `finished` stores the signed result bytes, so a redelivered id is answered from here: never
 * executed twice, and a destructive command cut short by a crash is reported as interrupted, not retried.
 */
export interface JournalOptions {
  /**
   * What a recorded `started` must survive before the command runs. `power-loss` (default, the site agent): fsync on
   * every write. `process-crash` (the ramdisk, whose journal lives in the RAM of one boot, which a power loss ends
   * anyway): WAL with `synchronous = OFF`, which SQLite documents as safe against a crash of the application (the
   * write is in the OS before it returns) and unsafe only against the OS or power going, so no fsync at all.
   */
  durability?: 'power-loss' | 'process-crash';
}

export class CommandJournal {
  readonly #db: Database.Database;
  readonly #select: Database.Statement<[string], Row>;
  readonly #start: Database.Statement<[string, string, number, number]>;
  readonly #finish: Database.Statement<[string, string, number, number, number, Buffer]>;

  constructor(stateDir: string, options: JournalOptions = {}) {
    mkdirSync(stateDir, { recursive: true });
    this.#db = new Database(join(stateDir, 'journal.db'));
    // Before the switch to WAL, which is itself a write: a ramdisk boot then creates its journal without an fsync
    // (one per boot was most of what starting a ramdisk cost on a fleet of them).
    this.#db.pragma(options.durability === 'process-crash' ? 'synchronous = OFF' : 'synchronous = FULL');
    this.#db.pragma('journal_mode = WAL');
    this.#db.exec(`CREATE TABLE IF NOT EXISTS executed (
      command_id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      destructive INTEGER NOT NULL,
      started_at_ms INTEGER NOT NULL,
      finished_at_ms INTEGER,
      result BLOB
    )`);
    this.#select = this.#db.prepare('SELECT command_id, kind, destructive, started_at_ms, result FROM executed WHERE command_id = ?');
    this.#start = this.#db.prepare('INSERT OR IGNORE INTO executed (command_id, kind, destructive, started_at_ms) VALUES (?, ?, ?, ?)');
    this.#finish = this.#db.prepare(
      `INSERT INTO executed (command_id, kind, destructive, started_at_ms, finished_at_ms, result) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(command_id) DO UPDATE SET finished_at_ms = excluded.finished_at_ms, result = excluded.result`,
    );
  }

  get(commandId: string): JournalEntry | undefined {
    const row = this.#select.get(commandId);
    if (!row) return undefined;
    const base = { commandId: row.command_id, kind: row.kind, destructive: row.destructive === 1, startedAtMs: row.started_at_ms };
    return row.result ? { ...base, state: 'finished', resultBytes: new Uint8Array(row.result) } : { ...base, state: 'started' };
  }

  /** Records the start; a second start of the same id (a re-executed non-destructive command) keeps the first. */
  started(commandId: string, kind: string, destructive: boolean, nowMs = Date.now()): void {
    this.#start.run(commandId, kind, destructive ? 1 : 0, nowMs);
  }

  /** Stores the signed result; also used for outcomes decided without executing (INTERRUPTED, EXPIRED). */
  finished(commandId: string, kind: string, destructive: boolean, resultBytes: Uint8Array, nowMs = Date.now()): void {
    this.#finish.run(commandId, kind, destructive ? 1 : 0, nowMs, nowMs, Buffer.from(resultBytes));
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
