import { execFile } from 'node:child_process';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ExecutionContext } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import { isBlockDevice, sizeOfDisk } from './blockDevices.ts';
import type { NoCloudFiles } from './noCloudSeed.ts';
import { dropDeviceCache, toolFailure } from './utilLinux.ts';

const run = promisify(execFile);

/** Room for three files of at most 64 KiB each; FAT12, like `cloud-localds --filesystem vfat` makes. */
export const CIDATA_SIZE_BYTES = 2 << 20;
const ALIGN_SECTORS = 2048;
/** The backup GPT (header and 128 entries) at the end of the disk; an MBR disk just leaves these sectors free. */
const GPT_TAIL_SECTORS = 33;
const GPT_BASIC_DATA = 'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7';
/** W95 FAT32 (LBA), what a vfat partition on an MBR disk is typed as. */
const MBR_FAT = 'c';
/** The volume label cloud-init's NoCloud datasource looks for (`cidata` or `CIDATA`). */
export const CIDATA_LABEL = 'CIDATA';

interface PartitionTable {
  /** `dos` or `gpt` from sfdisk; anything else is a table this step does not extend. */
  label: string;
  sectorsize?: number;
  partitions?: { start: number; size: number; type: string; name?: string }[];
}

/** Where the seed went (its contents, user data, are never part of a result), or why none was written. */
export type WrittenCidata = CidataPartition | { written: false; disk: string; reason: string };
interface CidataPartition {
  written: true;
  disk: string;
  table: 'dos' | 'gpt';
  offset: number;
  sizeBytes: number;
  files: Record<string, number>;
  verified: true;
}

/**
 * Runs one of the Debian tools the ramdisk carries (fdisk's `sfdisk`, dosfstools' `mkfs.fat`, mtools' `mcopy`):
 * the same tools, on a block device or (in simulation) the file that stands for one, leave the same bytes.
 */
async function tool(file: string, args: readonly string[], ctx: ExecutionContext, input?: string): Promise<string> {
  try {
    const child = run(file, [...args], { signal: ctx.signal, env: { ...process.env, MTOOLS_SKIP_CHECK: '1' }, maxBuffer: 1 << 20 });
    if (input !== undefined) child.child.stdin?.end(input);
    return (await child).stdout;
  } catch (cause) {
    throw toolFailure(file, args, cause);
  }
}

async function readTable(disk: string, ctx: ExecutionContext): Promise<PartitionTable | undefined> {
  try {
    return (JSON.parse(await tool('sfdisk', ['--json', disk], ctx)) as { partitiontable: PartitionTable }).partitiontable;
  } catch (err) {
    // sfdisk exits 1 on a disk without a table; a ramdisk without sfdisk must fail, not pass for one.
    if (ctx.signal.aborted || (err as { cause?: { code?: unknown } }).cause?.code === 'ENOENT') throw err;
    return undefined;
  }
}

const NO_REREAD = ['--no-reread', '--no-tell-kernel'] as const;

/**
 * The `cidata` partition at the end of the disk, added to the image's partition table after its last partition (the
 * place Ironic gives its config drive), or the one a previous attempt of this step added. A GPT image smaller than
 * the disk first gets its backup table moved to the disk's end, as any GPT tool would.
 */
type Placement = { table: 'dos' | 'gpt'; startSector: number; sectorSize: number } | { reason: string; code: 'INVALID_COMMAND' | 'IMAGE_TOO_LARGE' };

async function cidataPartition(disk: string, label: 'dos' | 'gpt', read: PartitionTable, ctx: ExecutionContext): Promise<Placement> {
  let table = read;
  if (label === 'gpt') {
    await tool('sfdisk', ['--quiet', ...NO_REREAD, '--relocate', 'gpt-bak-std', disk], ctx);
    table = (await readTable(disk, ctx))!;
  }
  const sectorSize = table.sectorsize ?? 512;
  const sizeSectors = CIDATA_SIZE_BYTES / sectorSize;
  const diskSectors = Math.floor((await sizeOfDisk(disk)) / sectorSize);
  const startSector = Math.floor((diskSectors - GPT_TAIL_SECTORS - sizeSectors) / ALIGN_SECTORS) * ALIGN_SECTORS;
  const partitions = table.partitions ?? [];
  const ours = (p: (typeof partitions)[number]) =>
    p.start === startSector && p.size === sizeSectors && (label === 'gpt' ? p.type === GPT_BASIC_DATA && p.name === 'cidata' : p.type === MBR_FAT);
  if (partitions.some(ours)) return { table: label, startSector, sectorSize };
  const imageEnd = Math.max(0, ...partitions.map((p) => p.start + p.size));
  if (startSector < imageEnd) return { reason: `the image on ${disk} leaves no room at the end of the disk for the cidata partition`, code: 'IMAGE_TOO_LARGE' };
  const type = label === 'gpt' ? `${GPT_BASIC_DATA}, name=cidata` : MBR_FAT;
  await tool('sfdisk', ['--quiet', ...NO_REREAD, '--append', disk], ctx, `start=${startSector}, size=${sizeSectors}, type=${type}\n`);
  return { table: label, startSector, sectorSize };
}

/**
 * Writes a NoCloud seed onto `disk`: a `cidata` partition at its end, formatted vfat with the label cloud-init looks
 * for (`mkfs.fat`), the seed's files copied in (`mcopy`, as `cloud-localds` does), fsynced and read back from the
 * device. Any image whose cloud-init has the NoCloud datasource (Debian's and Ubuntu's cloud images do) finds it.
 */
export async function writeCidata(disk: string, files: NoCloudFiles, ctx: ExecutionContext, options: { required: boolean }): Promise<WrittenCidata> {
  const found = await readTable(disk, ctx);
  const place: Placement =
    found === undefined || (found.label !== 'dos' && found.label !== 'gpt')
      ? { reason: `the image on ${disk} has no partition table: there is nowhere to add the cidata partition`, code: 'INVALID_COMMAND' }
      : await cidataPartition(disk, found.label, found, ctx);
  if ('reason' in place) {
    if (options.required) throw new AgentError(place.code, `${place.reason}, so the deploy's SSH keys, user data and network config cannot land`);
    return { written: false, disk, reason: place.reason };
  }
  const { table, startSector, sectorSize } = place;
  const offset = startSector * sectorSize;
  // FAT12 said outright: mkfs.fat sizes the FAT by the whole device under --offset, and picks FAT32 (too small to
  // hold one in 2 MiB) on a disk of 512 MiB or more.
  await tool('mkfs.fat', ['-F', '12', '-n', CIDATA_LABEL, '--offset', String(startSector), disk, String(CIDATA_SIZE_BYTES / 1024)], ctx);
  const image = `${disk}@@${offset}`;
  // mcopy copies files, not bytes: the seed goes through a private folder that is removed at once.
  const staging = await mkdtemp(join(tmpdir(), 'bc-cidata-'));
  try {
    for (const [name, content] of Object.entries(files)) {
      const source = join(staging, name);
      await writeFile(source, content, { mode: 0o600 });
      await tool('mcopy', ['-o', '-i', image, source, `::${name}`], ctx);
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  const handle = await open(disk, 'r+');
  try {
    await handle.sync();
    if (await isBlockDevice(handle)) await dropDeviceCache(disk, ctx);
  } finally {
    await handle.close();
  }
  const sizes: Record<string, number> = {};
  for (const [name, content] of Object.entries(files)) {
    if ((await tool('mcopy', ['-i', image, `::${name}`, '-'], ctx)) !== content)
      throw new AgentError('DISK_VERIFY_FAILED', `${name} in the cidata partition of ${disk} does not read back as written`);
    sizes[name] = Buffer.byteLength(content);
  }
  return { written: true, disk, table, offset, sizeBytes: CIDATA_SIZE_BYTES, files: sizes, verified: true };
}
