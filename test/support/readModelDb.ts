import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Opens the live file of a read model (`<dataDir>/readmodels/<name>/CURRENT`) read-only, for SQL in assertions.
 * Re-open after a rebuild: the pointer may have moved.
 */
export function openReadModel(dataDir: string, name: string): Database.Database & Disposable {
  const dir = join(dataDir, 'readmodels', name);
  const pointer = join(dir, 'CURRENT');
  if (!existsSync(pointer)) throw new Error(`read model ${name} has no CURRENT pointer in ${dir}`);
  const db = new Database(join(dir, readFileSync(pointer, 'utf8').trim()), { readonly: true, fileMustExist: true });
  return Object.assign(db, { [Symbol.dispose]: () => void (db.open && db.close()) });
}
