import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A real block device over a file in `dir` (`losetup`; tests run as root, as CI does). */
export interface LoopDevice {
  readonly path: string;
  readonly file: string;
  detach(): void;
}

/**
 * Attaches a loop device over a new file of `sizeBytes` filled with `fill`. There is no fallback: without losetup (or
 * root) this throws, and the test fails, because a wipe checked only on plain files proves nothing about disks.
 */
export function attachLoopDevice(dir: string, name: string, sizeBytes: number, fill = 0xff): LoopDevice {
  const file = join(dir, `${name}.img`);
  writeFileSync(file, Buffer.alloc(sizeBytes, fill));
  const path = execFileSync('losetup', ['--find', '--show', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  let attached = true;
  return {
    path,
    file,
    detach() {
      if (!attached) return;
      attached = false;
      execFileSync('losetup', ['--detach', path]);
      rmSync(file, { force: true });
    },
  };
}

/** Every byte of a file or device, read directly (a block device through its page cache, which a wipe drops). */
export function readAll(path: string, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    let offset = 0;
    while (offset < length) {
      const n = readSync(fd, buffer, offset, length - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return buffer.subarray(0, offset);
  } finally {
    closeSync(fd);
  }
}
