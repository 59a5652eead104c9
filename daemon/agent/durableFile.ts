import * as nodeFs from 'node:fs';
import { dirname } from 'node:path';

/**
 * The file-system calls a durable write makes: `node:fs`, or in tests a disk whose power can be cut between any two
 * of them (`test/support/powerCutDisk.ts`).
 */
export type DurableFs = Pick<typeof nodeFs, 'openSync' | 'writeSync' | 'fsyncSync' | 'closeSync' | 'renameSync' | 'fchmodSync'>;

/**
 * Writes `file` so that a power loss at any moment leaves the previous content or the new one, never a mix, an
 * empty file or none: a temp file written and fsynced, renamed over `file`, then the folder fsynced. Without the first
 * fsync a file system that journals the rename before the data (ext4's delayed allocation) comes back from a power
 * cut with `file` at 0 bytes, which is how an installed host lost its membership and its agent crash-looped for good;
 * without the second the rename itself may be undone. Every file an agent must find after a power loss (its key,
 * membership, credentials, boot tokens) goes through here.
 */
export function writeFileDurably(file: string, data: string | Uint8Array, options: { mode?: number } = {}, fs: DurableFs = nodeFs): void {
  const tmp = `${file}.tmp`;
  const mode = options.mode ?? 0o600;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const fd = fs.openSync(tmp, 'w', mode);
  try {
    // A temp file left by an earlier crash keeps its old mode through open(): set it explicitly.
    fs.fchmodSync(fd, mode);
    for (let offset = 0; offset < bytes.length;) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncFolder(dirname(file), fs);
}

/** Makes a rename or removal in `dir` durable. */
export function syncFolder(dir: string, fs: DurableFs = nodeFs): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
