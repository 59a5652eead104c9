import { execFileSync, spawnSync } from 'node:child_process';

interface Partition {
  start: number;
  size: number;
  type: string;
  name?: string;
}

/**
 * A file of the NoCloud seed a deploy left on `disk` (a block device or the file that stands for one), read the way
 * the host's cloud-init finds it: the partition whose vfat filesystem is labelled CIDATA (`blkid`), its file copied
 * out with `mcopy`. Undefined when the disk has no such partition.
 */
export function readNoCloudFile(disk: string, name: 'user-data' | 'meta-data' | 'network-config'): string | undefined {
  const run = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const { partitiontable } = JSON.parse(run('sfdisk', ['--json', disk])) as { partitiontable: { sectorsize?: number; partitions?: Partition[] } };
  const sector = partitiontable.sectorsize ?? 512;
  for (const p of partitiontable.partitions ?? []) {
    // blkid exits 2 where it finds no filesystem.
    const probe = spawnSync('blkid', ['-p', '-o', 'export', '--offset', String(p.start * sector), '--size', String(p.size * sector), disk], {
      encoding: 'utf8',
    }).stdout;
    if (/^LABEL=CIDATA$/m.test(probe)) return run('mcopy', ['-i', `${disk}@@${p.start * sector}`, `::${name}`, '-']);
  }
  return undefined;
}
