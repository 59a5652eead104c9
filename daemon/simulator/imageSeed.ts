import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { SEED_MAX_BYTES, decodeNodeSeed, seedPartitionOffset, type NodeSeed } from '../../schemas/agent/nodeSeed.ts';

/**
 * What the deployed image's init does with its `bc-seed` partition (scripts/emulatedSite/rootfs/image-init.sh), for
 * a simulated machine's file-backed disk: read the seed the deploy wrote, and zero it once `bcd node` joined.
 */
export function readImageSeed(disk: string): { seed: NodeSeed; offset: number } | undefined {
  const fd = openSync(disk, 'r');
  try {
    const mbr = Buffer.alloc(512);
    readSync(fd, mbr, 0, mbr.length, 0);
    const offset = seedPartitionOffset(mbr);
    if (offset === undefined) return undefined;
    const bytes = Buffer.alloc(SEED_MAX_BYTES);
    readSync(fd, bytes, 0, bytes.length, offset);
    const seed = decodeNodeSeed(bytes);
    return seed && { seed, offset };
  } finally {
    closeSync(fd);
  }
}

export function zeroImageSeed(disk: string, offset: number): void {
  const fd = openSync(disk, 'r+');
  try {
    writeSync(fd, Buffer.alloc(SEED_MAX_BYTES), 0, SEED_MAX_BYTES, offset);
  } finally {
    closeSync(fd);
  }
}

/**
 * The image a seeded `bcd node` runs from, by the digest of its partition table: a later disk boot of the same image
 * resumes that agent, while a wiped or reimaged disk does not (on hardware its state lived on the disk itself).
 */
const markerFile = (osStateDir: string) => join(osStateDir, 'image-os.json');
const tableDigest = (disk: string) => {
  const fd = openSync(disk, 'r');
  try {
    const mbr = Buffer.alloc(512);
    readSync(fd, mbr, 0, mbr.length, 0);
    return createHash('sha256').update(mbr).digest('hex');
  } finally {
    closeSync(fd);
  }
};

export function markImageOs(osStateDir: string, disk: string): void {
  writeFileSync(markerFile(osStateDir), JSON.stringify({ partitionTable: tableDigest(disk) }));
}

export function isMarkedImageOs(osStateDir: string, disk: string): boolean {
  if (!existsSync(markerFile(osStateDir))) return false;
  return (JSON.parse(readFileSync(markerFile(osStateDir), 'utf8')) as { partitionTable?: string }).partitionTable === tableDigest(disk);
}
