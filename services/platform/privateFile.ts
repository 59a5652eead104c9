import { chmodSync, linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

/**
 * Creates `file` (mode 0600, in a 0700 directory) with `content()` unless it exists. The content goes to a temp file
 * that is hard-linked into place, so processes starting at once on one data dir agree on the first one written:
 * the later links fail and those processes read the winner's file.
 */
export function createPrivateFileOnce(file: string, content: () => string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, content(), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}
