import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { makePrivateDir, restrictTree } from '../platform/privateTree.ts';

/**
 * The files of one read model: `<dataDir>/readmodels/<name>/`, with `CURRENT` naming the live database file. A
 * rebuild writes a new file and swaps `CURRENT` with an atomic rename, so readers never see a half-built model.
 */
export class ReadModelFiles {
  readonly dir: string;
  readonly pointer: string;

  constructor(
    dataDir: string,
    readonly name: string,
  ) {
    this.dir = join(dataDir, 'readmodels', name);
    this.pointer = join(this.dir, 'CURRENT');
    // The owner's only (0700/0600), including what an older version or another umask left readable to others.
    makePrivateDir(join(dataDir, 'readmodels'));
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    restrictTree(this.dir);
  }

  /** Path of the live database file; creates the pointer for a first file when there is none. */
  current(): string {
    if (!existsSync(this.pointer)) this.swapTo(this.newFile());
    return join(this.dir, readFileSync(this.pointer, 'utf8').trim());
  }

  /** A fresh, unused file name for a (re)build. */
  newFile(): string {
    return join(this.dir, `${this.name}-${Date.now()}-${randomUUID().slice(0, 8)}.db`);
  }

  /** Removes a database file and its WAL and shared-memory files. */
  remove(file: string): void {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  }

  /** Makes `file` the live database atomically, and removes files older than the one it replaces. */
  swapTo(file: string): void {
    const previous = existsSync(this.pointer) ? readFileSync(this.pointer, 'utf8').trim() : undefined;
    const tmp = `${this.pointer}.${process.pid}.tmp`;
    writeFileSync(tmp, `${file.split('/').pop()}\n`, { mode: 0o600 });
    renameSync(tmp, this.pointer);
    const keep = new Set([file.split('/').pop(), previous]);
    for (const entry of readdirSync(this.dir)) {
      const base = entry.replace(/-(wal|shm)$/, '');
      if (base.endsWith('.db') && !keep.has(base)) rmSync(join(this.dir, entry), { force: true });
    }
  }
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Whether `file` still starts with SQLite's header: a cheap check for a file overwritten or truncated under us. */
export function hasDatabaseHeader(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
