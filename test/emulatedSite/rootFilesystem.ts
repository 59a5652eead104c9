import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { expect } from 'vitest';

/**
 * The root partition (the image's second) of a VM's disk copied out to `out`, with its journal replayed as a mount
 * would. The VM may be off (powered off without unmounting) or still running: what `bcd node` wrote durably (fsynced,
 * so committed to the journal) is in the copy either way.
 */
export function rootFilesystemOf(disk: string, out: string): string {
  const { partitiontable } = JSON.parse(execFileSync('sfdisk', ['--json', disk], { encoding: 'utf8' })) as {
    partitiontable: { partitions: { start: number; size: number }[] };
  };
  const root = partitiontable.partitions[1]!;
  const [from, to] = [openSync(disk, 'r'), openSync(out, 'w')];
  try {
    const chunk = Buffer.alloc(4 << 20);
    for (let done = 0; done < root.size * 512;) {
      const n = readSync(from, chunk, 0, Math.min(chunk.length, root.size * 512 - done), root.start * 512 + done);
      writeSync(to, chunk, 0, n);
      done += n;
    }
  } finally {
    closeSync(from);
    closeSync(to);
  }
  // e2fsck replays the journal (exit 1: it fixed something, e.g. the replay).
  const fsck = spawnSync('e2fsck', ['-fy', out], { encoding: 'utf8' });
  expect(fsck.status, fsck.stdout + fsck.stderr).toBeLessThanOrEqual(1);
  return out;
}

/** A file of a root filesystem image, read with debugfs (never mounted). */
export const catFile = (root: string, path: string) =>
  execFileSync('debugfs', ['-R', `cat ${path}`, root], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

/** Where a symbolic link of a root filesystem image points (debugfs `stat`'s "Fast link dest"), or undefined. */
export function linkTarget(root: string, path: string): string | undefined {
  const stat = execFileSync('debugfs', ['-R', `stat ${path}`, root], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return /Fast link dest: "([^"]*)"/.exec(stat)?.[1];
}

/** The entries of a folder of a root filesystem image (debugfs `ls -p`), without `.` and `..`; empty when absent. */
export function folderEntries(root: string, path: string): string[] {
  const listing = execFileSync('debugfs', ['-R', `ls -p ${path}`, root], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return listing
    .split('\n')
    .map((line) => line.split('/')[5])
    .filter((name): name is string => name !== undefined && name !== '' && name !== '.' && name !== '..');
}
