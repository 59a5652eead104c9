import { createHash } from 'node:crypto';
import type { WipeSample } from '../../schemas/agent/diskWipe.ts';

/**
 * The byte offsets a `discard` wipe reads back: the first and the last block (where partition tables and their
 * backups live), then blocks picked by SHA-256(`<seed>:<i>`) across the whole device. Anyone holding the seed can
 * recompute them; a fresh random seed per wipe means no region can be left unerased because it is never looked at.
 */
export function sampleOffsets(sample: WipeSample, sizeBytes: number): number[] {
  const blockBytes = Math.min(sample.blockBytes, sizeBytes);
  const blocks = BigInt(Math.floor(sizeBytes / blockBytes));
  const last = sizeBytes - blockBytes;
  const offsets: number[] = [];
  for (let i = 0; i < sample.count; i++) {
    if (i === 0) offsets.push(0);
    else if (i === 1) offsets.push(last);
    else {
      const digest = createHash('sha256').update(`${sample.seed}:${i}`).digest();
      offsets.push(Number(digest.readBigUInt64BE(0) % blocks) * blockBytes);
    }
  }
  return offsets;
}
