import type { Database } from 'better-sqlite3';
import { allProjections } from '../../projections/catalog.ts';
import { applyBatch, type ProjectedMessage } from '../../services/projectors/applyBatch.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import { openWriter } from '../../projections/runtime/readModelDatabase.ts';

/** Everything a read model database holds: schema, version and every row of every table, ordered by primary key. */
export interface TableDump {
  userVersion: number;
  schema: unknown[];
  tables: Record<string, unknown[]>;
}

export function dumpTables(db: Database): TableDump {
  const schema = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
  const tables: Record<string, unknown[]> = {};
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  for (const name of names) {
    const columns = db.pragma(`table_info(${JSON.stringify(name)})`) as { name: string; pk: number }[];
    const pk = columns
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => JSON.stringify(c.name));
    tables[name] = db.prepare(`SELECT * FROM ${JSON.stringify(name)} ORDER BY ${pk.length ? pk.join(', ') : 'rowid'}`).all();
  }
  return { userVersion: db.pragma('user_version', { simple: true }) as number, schema, tables };
}

/** Applies `batches` one `applyBatch` call each to a fresh in-memory read model per projection. */
export function projectInMemory(batches: readonly (readonly ProjectedMessage[])[], projections: readonly Projection[] = allProjections): Map<string, Database> {
  const dbs = new Map<string, Database>();
  for (const projection of projections) {
    const db = openWriter(':memory:', projection);
    for (const batch of batches) applyBatch(db, projection, batch);
    dbs.set(projection.name, db);
  }
  return dbs;
}

/** Dumps of every projection's in-memory model, closing the databases. */
export function dumpAll(dbs: Map<string, Database>): Record<string, TableDump> {
  const out: Record<string, TableDump> = {};
  for (const [name, db] of dbs) {
    out[name] = dumpTables(db);
    db.close();
  }
  return out;
}
