import { open, rm } from 'node:fs/promises';
import type { ExecutionContext } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';

const CHUNK = 4 << 20;

export interface WipedDisk {
  path: string;
  sizeBytes: number;
  /** Bytes read back after the fsync and found to be zero: equal to sizeBytes when verified. */
  verifiedZeroBytes: number;
  verified: boolean;
}

/**
 * Overwrites the whole device with zeros, fsyncs, then reads every byte back. Only a full read-back counts as
 * wiped: a disk that silently drops writes must not be reported clean. (`discard` mode is zeroing too here; a
 * real ramdisk would try BLKDISCARD with zeroing as the fallback.) The disk's user-data area goes with it.
 */
export async function wipeDisk(path: string, ctx: ExecutionContext): Promise<WipedDisk> {
  const handle = await open(path, 'r+');
  try {
    const sizeBytes = (await handle.stat()).size;
    const zeros = Buffer.alloc(CHUNK);
    for (let offset = 0; offset < sizeBytes; offset += CHUNK) {
      if (ctx.signal.aborted) throw new AgentError('DRIVER_ERROR', 'wipe stopped: machine going down');
      await handle.write(zeros, 0, Math.min(CHUNK, sizeBytes - offset), offset);
      ctx.heartbeat();
    }
    await handle.sync();
    const buf = Buffer.alloc(CHUNK);
    let verifiedZeroBytes = 0;
    for (let offset = 0; offset < sizeBytes; offset += CHUNK) {
      if (ctx.signal.aborted) throw new AgentError('DRIVER_ERROR', 'wipe verification stopped: machine going down');
      const { bytesRead } = await handle.read(buf, 0, Math.min(CHUNK, sizeBytes - offset), offset);
      // A native compare against the zero buffer; the byte-by-byte search only runs to report a failure.
      const clean = bytesRead > 0 && buf.subarray(0, bytesRead).equals(zeros.subarray(0, bytesRead));
      const nonZero = clean ? -1 : buf.subarray(0, bytesRead).findIndex((b) => b !== 0);
      if (!clean) {
        throw new AgentError('DISK_VERIFY_FAILED', `${path} reads back a non-zero byte at offset ${offset + Math.max(nonZero, 0)}`);
      }
      verifiedZeroBytes += bytesRead;
      ctx.heartbeat();
    }
    await rm(`${path}.userdata.json`, { force: true });
    return { path, sizeBytes, verifiedZeroBytes, verified: verifiedZeroBytes === sizeBytes };
  } finally {
    await handle.close();
  }
}
