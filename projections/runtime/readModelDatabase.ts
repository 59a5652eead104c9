import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import type { Database as Db } from 'better-sqlite3';
import type { Projection } from './projection.ts';
import { statement } from './statements.ts';

export interface Checkpoint {
  seq: number;
  /** `Nats-Msg-Id` of the message at `seq`, to detect a log that was replaced under us. */
  messageId: string | null;
}

/** Opens a read model file for writing: WAL, migrations to the projection's version, checkpoint table. */
export function openWriter(file: string, projection: Projection): Db {
  // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files it creates the database file's mode.
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS _checkpoint (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, command_id TEXT)');
  db.exec('INSERT OR IGNORE INTO _checkpoint (id, seq, command_id) VALUES (1, 0, NULL)');
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > projection.migrations.length) {
    throw new Error(`${file} is at schema version ${current}, newer than ${projection.name}'s ${projection.migrations.length}`);
  }
  db.transaction(() => {
    for (let v = current; v < projection.migrations.length; v++) db.exec(projection.migrations[v]!);
    db.pragma(`user_version = ${projection.migrations.length}`);
  })();
  return db;
}

/** Opens a read model file for queries only. */
export function openReader(file: string): Db {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('query_only = ON');
  return db;
}

export function readCheckpoint(db: Db): Checkpoint {
  const row = statement(db, 'SELECT seq, command_id AS messageId FROM _checkpoint WHERE id = 1').get() as Checkpoint | undefined;
  return row ?? { seq: 0, messageId: null };
}

export function writeCheckpoint(db: Db, checkpoint: Checkpoint): void {
  statement(db, 'UPDATE _checkpoint SET seq = ?, command_id = ? WHERE id = 1').run(checkpoint.seq, checkpoint.messageId);
}
