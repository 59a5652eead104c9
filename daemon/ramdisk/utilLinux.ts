import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ExecutionContext } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';

/**
 * The util-linux tools the ramdisk runs for what Node cannot do itself (ioctls): BLKDISCARD, BLKSECDISCARD and
 * BLKZEROOUT (`blkdiscard`), BLKFLSBUF (`blockdev --flushbufs`) and a hole punch through a file (`fallocate`). The ramdisk image
 * must carry util-linux.
 */
const run = promisify(execFile);

const HEARTBEAT_MS = 5_000;

/** A ramdisk tool that failed: `DRIVER_ERROR` naming the missing package, or the command with its stderr. */
export function toolFailure(file: string, args: readonly string[], cause: unknown, packageName?: string): AgentError {
  const missing = (cause as { code?: unknown }).code === 'ENOENT';
  const output = (cause as { stderr?: unknown }).stderr;
  const stderr = (typeof output === 'string' || Buffer.isBuffer(output) ? output.toString() : '').trim();
  const notInstalled = `${file} is not installed in this ramdisk${packageName ? ` (${packageName})` : ''}`;
  return new AgentError('DRIVER_ERROR', missing ? notInstalled : `${file} ${args.join(' ')} failed: ${stderr}`, { cause });
}

/** Runs a tool, heartbeating while it works (a discard of a large disk can take minutes); throws with its stderr. */
async function tool(file: string, args: readonly string[], ctx: ExecutionContext): Promise<void> {
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  try {
    await run(file, [...args], { signal: ctx.signal });
  } catch (cause) {
    throw toolFailure(file, args, cause, 'util-linux');
  } finally {
    clearInterval(beat);
  }
}

/**
 * Discards every block of a block device. A secure discard (the blocks erased, not only unmapped) is tried first;
 * devices that do not support it (most SSDs, loop devices) take a plain discard. Returns whether it was secure.
 */
export async function discardDevice(path: string, ctx: ExecutionContext): Promise<{ secure: boolean }> {
  try {
    await tool('blkdiscard', ['--secure', path], ctx);
    return { secure: true };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    await tool('blkdiscard', [path], ctx);
    return { secure: false };
  }
}

/**
 * Writes zeros over `length` bytes of a block device at `offset` in the kernel (BLKZEROOUT, `blkdiscard --zeroout`):
 * the device's own write-zeroes command where it has one, else the kernel's zero page written over every block; never
 * an unmap (the ioctl asks for none), so it is an overwrite, as a zero wipe promises. No byte crosses user space:
 * under emulation, where the guest's CPU is what a wipe waits for, copying zeros out of a buffer made it slower than dd.
 */
export function zeroOutRange(path: string, offset: number, length: number, ctx: ExecutionContext): Promise<void> {
  // --force: the disk may hold a partition table, which blkdiscard would otherwise stop to warn about.
  return tool('blkdiscard', ['--zeroout', '--force', '--offset', String(offset), '--length', String(length), path], ctx);
}

/** The file-backed disk's analogue of a discard (what a loop device does for one): deallocate every byte, keep the size. */
export function punchHole(path: string, sizeBytes: number, ctx: ExecutionContext): Promise<void> {
  return tool('fallocate', ['--punch-hole', '--keep-size', '--offset', '0', '--length', String(sizeBytes), path], ctx);
}

/**
 * Drops the device's cached pages (BLKFLSBUF), so what is read next comes from the device itself: a read-back
 * served from the page cache would show what was written, not what the disk kept.
 */
export function dropDeviceCache(path: string, ctx: ExecutionContext): Promise<void> {
  return tool('blockdev', ['--flushbufs', path], ctx);
}
