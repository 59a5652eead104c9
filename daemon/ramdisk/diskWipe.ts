import { randomBytes } from 'node:crypto';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import type { WipedDisk, WipeMethod, WipeSample } from '../../schemas/agent/diskWipe.ts';
import type { ExecutionContext } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import { diskSizeBytes, isBlockDevice, supportsDiscard, SYSFS, type MachineDisk } from './blockDevices.ts';
import { discardDevice, dropDeviceCache, punchHole, zeroOutRange } from './utilLinux.ts';
import { progressLine } from './progressLine.ts';
import { readAhead } from './readAhead.ts';
import { sampleOffsets } from './wipeSample.ts';

const CHUNK = 4 << 20;
const ZEROS = Buffer.alloc(CHUNK);
/** A block device is zeroed by the kernel this much at a time: progress, heartbeats and a stop between ranges. */
const ZERO_OUT_RANGE = 1 << 30;

export interface WipeOptions {
  /** Blocks a `discard` wipe reads back (default 1024 blocks of 4 KiB, the first and last among them). */
  sampleBlocks?: number;
  sysfs?: string;
}

const SAMPLE_BLOCK_BYTES = 4096;

function stopIfAborted(ctx: ExecutionContext, what: string): void {
  if (ctx.signal.aborted) throw new AgentError('DRIVER_ERROR', `${what} stopped: machine going down`);
}

/** Where `bytes`, read at `offset` for `length`, are not all zeros (a short read counts), or -1 (a native compare). */
function nonZeroAt(bytes: Buffer, offset: number, length: number): number {
  if (bytes.length === length && bytes.equals(ZEROS.subarray(0, length))) return -1;
  const first = bytes.findIndex((b) => b !== 0);
  return offset + (first === -1 ? bytes.length : first);
}

/** Reads `length` bytes at `offset`; true when every one is zero. */
async function readsZero(handle: FileHandle, buf: Buffer, offset: number, length: number): Promise<boolean> {
  const { bytesRead } = await handle.read(buf, 0, length, offset);
  return nonZeroAt(buf.subarray(0, bytesRead), offset, length) === -1;
}

/**
 * `zero`: overwrites the whole device with zeros (a block device in the kernel, BLKZEROOUT; a file-backed disk by
 * writes), fsyncs, drops the device's page cache, then reads every byte back. Only a full read-back counts: a disk that
 * silently drops writes must not be reported clean.
 */
async function zeroWipe(disk: MachineDisk, ctx: ExecutionContext, sysfs: string): Promise<WipedDisk> {
  const handle = await open(disk.path, 'r+');
  try {
    const sizeBytes = await diskSizeBytes(handle, disk.path, sysfs);
    const name = basename(disk.path);
    ctx.output?.('stdout', `zeroing ${name} (${sizeBytes} bytes), then reading every byte back`);
    const zeroed = progressLine(ctx, `zero ${name}`, sizeBytes);
    const blockDevice = await isBlockDevice(handle);
    const step = blockDevice ? ZERO_OUT_RANGE : CHUNK;
    for (let offset = 0; offset < sizeBytes; offset += step) {
      stopIfAborted(ctx, 'wipe');
      const length = Math.min(step, sizeBytes - offset);
      if (blockDevice) await zeroOutRange(disk.path, offset, length, ctx);
      else await handle.write(ZEROS, 0, length, offset);
      ctx.heartbeat();
      zeroed(offset + length);
    }
    await handle.sync();
    if (blockDevice) await dropDeviceCache(disk.path, ctx);
    let verifiedBytes = 0;
    const verified = progressLine(ctx, `verify ${name}`, sizeBytes);
    await readAhead(handle, sizeBytes, CHUNK, (bytes, offset) => {
      stopIfAborted(ctx, 'wipe verification');
      const at = nonZeroAt(bytes, offset, Math.min(CHUNK, sizeBytes - offset));
      if (at !== -1) throw new AgentError('DISK_VERIFY_FAILED', `${disk.path} reads back a non-zero byte at offset ${at}`);
      verifiedBytes += bytes.length;
      ctx.heartbeat();
      verified(verifiedBytes);
    });
    return { ...disk, sizeBytes, method: 'zero', verifiedBytes };
  } finally {
    await handle.close();
  }
}

/**
 * `discard`: discards the whole device (a hole punched through a file-backed disk), then reads back a seeded random
 * sample of blocks. Undefined when the device cannot discard or still holds data where the sample looked: the
 * caller zeroes it instead, so a drive whose discard does not erase is never reported wiped.
 */
async function discardWipe(disk: MachineDisk, ctx: ExecutionContext, options: WipeOptions & { sysfs: string }): Promise<WipedDisk | undefined> {
  const handle = await open(disk.path, 'r');
  try {
    const sizeBytes = await diskSizeBytes(handle, disk.path, options.sysfs);
    const blockDevice = await isBlockDevice(handle);
    ctx.output?.('stdout', `discarding ${basename(disk.path)} (${sizeBytes} bytes), then reading a random sample back`);
    let secure = false;
    if (blockDevice) {
      if (!(await supportsDiscard(disk.path, options.sysfs))) return undefined;
      ({ secure } = await discardDevice(disk.path, ctx));
      await dropDeviceCache(disk.path, ctx);
    } else {
      await punchHole(disk.path, sizeBytes, ctx);
    }
    const sample: WipeSample = { seed: randomBytes(16).toString('hex'), count: options.sampleBlocks ?? 1024, blockBytes: SAMPLE_BLOCK_BYTES };
    const buf = Buffer.alloc(SAMPLE_BLOCK_BYTES);
    for (const offset of sampleOffsets(sample, sizeBytes)) {
      stopIfAborted(ctx, 'wipe verification');
      if (!(await readsZero(handle, buf, offset, Math.min(SAMPLE_BLOCK_BYTES, sizeBytes)))) {
        ctx.output?.('stderr', `${basename(disk.path)} still holds data after the discard; zeroing it instead`);
        return undefined;
      }
    }
    ctx.output?.('stdout', `${basename(disk.path)}: ${sample.count} sampled blocks read back as zeros`);
    ctx.heartbeat();
    return { ...disk, sizeBytes, method: 'discard', discardedBytes: sizeBytes, secure, sample };
  } finally {
    await handle.close();
  }
}

/**
 * Erases one disk with `method` (see `WipeMethod`) and says what was verified. The simulated disk's user-data area
 * (a file beside it) goes with it.
 */
export async function wipeDisk(disk: MachineDisk, method: WipeMethod, ctx: ExecutionContext, options: WipeOptions = {}): Promise<WipedDisk> {
  const sysfs = options.sysfs ?? SYSFS;
  const wiped = (method === 'discard' ? await discardWipe(disk, ctx, { ...options, sysfs }) : undefined) ?? (await zeroWipe(disk, ctx, sysfs));
  await rm(`${disk.path}.userdata.json`, { force: true });
  return wiped;
}
