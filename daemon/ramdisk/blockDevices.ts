import { open, readdir, readFile, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { AgentError } from '../agent/errors.ts';

/**
 * A disk of the machine as the ramdisk acts on it: a block device on hardware (`/dev/vda`, `/dev/nvme0n1`), a
 * plain file in simulation. `serial` and `model` are what the device reports (sysfs), or what the simulated machine
 * gives its file; they let the control plane match the disk to the drives the BMC listed.
 */
export interface MachineDisk {
  readonly path: string;
  readonly serial: string | null;
  readonly model: string | null;
}

/** Where the kernel's sysfs is mounted; tests and containers may point elsewhere. */
export const SYSFS = '/sys';

// Linux's dev_t encoding (include/linux/kdev_t.h, new_encode_dev): 12 bits of major, 20 of minor, split.
const majorOf = (rdev: bigint) => Number(((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn));
const minorOf = (rdev: bigint) => Number((rdev & 0xffn) | ((rdev >> 12n) & ~0xffn));

export async function readText(path: string): Promise<string | null> {
  try {
    const text = (await readFile(path, 'utf8')).replace(/\0/g, '').trim();
    return text === '' ? null : text;
  } catch {
    return null;
  }
}

/** The sysfs directory of the block device at `path` (a `/dev` node or a symlink to one such as `/dev/disk/by-id/…`). */
async function sysfsDirOf(path: string, sysfs: string): Promise<string | undefined> {
  const st = await stat(path, { bigint: true });
  if (!st.isBlockDevice()) return undefined;
  return realpath(join(sysfs, 'dev', 'block', `${majorOf(st.rdev)}:${minorOf(st.rdev)}`));
}

/**
 * Unit serial number of a SCSI/SATA disk from VPD page 0x80: a 4-byte header (page length in bytes 2–3), then
 * ASCII. NVMe and virtio expose `serial` as text instead.
 */
async function vpdSerial(dir: string): Promise<string | null> {
  try {
    const page = await readFile(join(dir, 'device', 'vpd_pg80'));
    const length = page.length >= 4 ? page.readUInt16BE(2) : 0;
    const text = page
      .subarray(4, 4 + length)
      .toString('latin1')
      .replace(/\0/g, '')
      .trim();
    return text === '' ? null : text;
  } catch {
    return null;
  }
}

/** Serial and model of a block device from sysfs: virtio-blk (`serial`), NVMe (`device/serial`, `device/model`), SCSI/SATA (VPD 0x80, `device/model`). */
export async function identityOf(dir: string): Promise<{ serial: string | null; model: string | null }> {
  const serial = (await readText(join(dir, 'serial'))) ?? (await readText(join(dir, 'device', 'serial'))) ?? (await vpdSerial(dir));
  return { serial, model: await readText(join(dir, 'device', 'model')) };
}

/**
 * Which disks a ramdisk acts on: the ones it was given (paths on its command line, or the simulated machine's
 * disks), or `discover`: every disk `discoverDisks` finds, listed again for each command (a disk may appear late).
 */
export type DiskSelection = readonly (string | MachineDisk)[] | 'discover';

/** The disks a selection names now. */
export function listDisks(selection: DiskSelection, sysfs = SYSFS): Promise<MachineDisk[]> {
  if (selection === 'discover') return discoverDisks(sysfs);
  return Promise.all(selection.map(async (disk) => (typeof disk === 'string' ? describeDisk(disk, sysfs) : disk)));
}

/** A disk named on the command line: a block device is identified from sysfs, a plain file has no serial or model. */
export async function describeDisk(path: string, sysfs = SYSFS): Promise<MachineDisk> {
  const dir = await sysfsDirOf(path, sysfs).catch((cause: unknown) => {
    throw new AgentError('NO_DISK', `${path} cannot be read`, { cause });
  });
  return dir ? { path, ...(await identityOf(dir)) } : { path, serial: null, model: null };
}

/**
 * The size of an open disk in bytes. `fstat` is 0 for every block device, so a block device is sized from sysfs
 * (`size` counts 512-byte sectors whatever the logical block size: the BLKGETSIZE64 value). A disk of unknown or
 * zero size is an error: sizing it as empty would "wipe" nothing and call that verified.
 */
export async function diskSizeBytes(handle: FileHandle, path: string, sysfs = SYSFS): Promise<number> {
  const st = await handle.stat({ bigint: true });
  let size: number | undefined;
  if (st.isFile()) size = Number(st.size);
  else if (st.isBlockDevice()) {
    const sectors = await readText(join(sysfs, 'dev', 'block', `${majorOf(st.rdev)}:${minorOf(st.rdev)}`, 'size'));
    size = sectors !== null && /^\d+$/.test(sectors) ? Number(sectors) * 512 : undefined;
  }
  if (size === undefined || !Number.isSafeInteger(size) || size <= 0) {
    throw new AgentError('DISK_SIZE_UNKNOWN', `${path} reports ${size === undefined ? 'no' : 'a zero'} size; refusing to treat it as wiped or written`);
  }
  return size;
}

/** The size of the disk at `path` (see `diskSizeBytes`). */
export async function sizeOfDisk(path: string, sysfs = SYSFS): Promise<number> {
  const handle = await open(path, 'r');
  try {
    return await diskSizeBytes(handle, path, sysfs);
  } finally {
    await handle.close();
  }
}

/** Whether an open disk is a block device (its page cache must be dropped before a read-back means anything). */
export async function isBlockDevice(handle: FileHandle): Promise<boolean> {
  return (await handle.stat()).isBlockDevice();
}

/** Whether the device at `path` accepts discards (`queue/discard_max_bytes` > 0); false for anything but a block device. */
export async function supportsDiscard(path: string, sysfs = SYSFS): Promise<boolean> {
  const dir = await sysfsDirOf(path, sysfs).catch(() => undefined);
  const max = dir ? await readText(join(dir, 'queue', 'discard_max_bytes')) : null;
  return max !== null && /^\d+$/.test(max) && Number(max) > 0;
}

// Not disks a tenant's data lives on: loop and RAM devices, device-mapper and md arrays (their members are the
// disks), optical and floppy drives, network block devices, and eMMC boot/RPMB areas.
export const NOT_A_DISK = /^(loop|ram|zram|dm-|md|sr|fd|nbd)\d*|^mmcblk\d+(boot\d+|rpmb)$/;

/**
 * Every disk of the machine, for a ramdisk started without `--disk`: the whole-disk block devices in
 * `/sys/block` that hold media (size > 0), are writable and are not removable media (the boot stick), by name.
 */
export async function discoverDisks(sysfs = SYSFS, devDir = '/dev'): Promise<MachineDisk[]> {
  const names = (await readdir(join(sysfs, 'block'))).filter((name) => !NOT_A_DISK.test(name)).sort();
  const disks: MachineDisk[] = [];
  for (const name of names) {
    const dir = await realpath(join(sysfs, 'block', name));
    const sectors = Number((await readText(join(dir, 'size'))) ?? '0');
    if (!(sectors > 0) || (await readText(join(dir, 'ro'))) === '1' || (await readText(join(dir, 'removable'))) === '1') continue;
    disks.push({ path: join(devDir, basename(dir)), ...(await identityOf(dir)) });
  }
  return disks;
}
