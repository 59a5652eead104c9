import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { runTool } from './hostTools.ts';
import { sortedEntries } from './reproducibleTree.ts';

const MiB = 1 << 20;

/** A partition of the image: its content (a file system image), size, MBR type, and whether BIOS boots it. */
export interface ImagePartition {
  file?: string;
  sizeMiB: number;
  type: string;
  bootable?: boolean;
}

/** Total size in whole MiB of a folder's files, for sizing the file system that will hold it. */
export function folderMiB(folder: string): number {
  return Math.ceil(Number(execFileSync('du', ['-s', '--block-size=1', '--apparent-size', folder]).toString().split('\t')[0]) / MiB);
}

/**
 * An ext4 file system image of `folder` made without mounting (`mke2fs -d`), with a fixed UUID, hash seed and
 * creation time so the same folder gives the same bytes.
 */
export function makeExt4(file: string, folder: string, sizeMiB: number, label: string, uuid: string, epoch: number): void {
  writeFileSync(file, '');
  truncateSync(file, sizeMiB * MiB);
  runTool(
    'mke2fs',
    ['-q', '-F', '-t', 'ext4', '-L', label, '-U', uuid, '-E', `hash_seed=${uuid},root_owner=0:0,lazy_itable_init=0,lazy_journal_init=0`, '-d', folder, file],
    {
      env: { ...process.env, E2FSPROGS_FAKE_TIME: String(epoch) },
    },
  );
  // mke2fs 1.47.0 copies each source inode's ctime (which no one can set) and atime (which reading it changed),
  // with their nanoseconds: pin every time of every inode to the epoch.
  // debugfs stamps its own write time unless told the time, and then the superblock's too.
  const commands = sortedEntries(folder)
    .map((path) => path.slice(1) || '/')
    .flatMap((path) => [
      ...['atime', 'mtime', 'ctime', 'crtime'].map((field) => `sif "${path}" ${field} @${epoch}`),
      ...['atime_extra', 'mtime_extra', 'ctime_extra', 'crtime_extra'].map((field) => `sif "${path}" ${field} 0`),
    ]);
  commands.push(`ssv wtime @${epoch}`);
  runTool('debugfs', ['-w', '-f', '-', file], { input: `${commands.join('\n')}\n`, env: { ...process.env, E2FSPROGS_FAKE_TIME: String(epoch) } });
}

/** A FAT file system image holding `files` at its root, with syslinux installed in its boot sector. */
export function makeSyslinuxFat(file: string, sizeMiB: number, label: string, volumeId: string, files: readonly string[], epoch: number): void {
  rmSync(file, { force: true });
  runTool('mkfs.vfat', ['--invariant', '-i', volumeId, '-n', label, '-C', file, String(sizeMiB * 1024)]);
  const env = { ...process.env, SOURCE_DATE_EPOCH: String(epoch), MTOOLS_SKIP_CHECK: '1' };
  runTool('syslinux', ['--install', file], { env });
  runTool('mcopy', ['-m', '-i', file, ...files, '::/'], { env });
}

/**
 * Writes an MBR disk image: syslinux's MBR boot code, a DOS partition table with a fixed disk id, and each
 * partition's file system image at its offset (the first at 1 MiB).
 */
export function assembleDisk(out: string, partitions: readonly ImagePartition[], diskId: string, mbrCode: string): void {
  const totalMiB = 1 + partitions.reduce((sum, p) => sum + p.sizeMiB, 0);
  writeFileSync(out, '');
  truncateSync(out, totalMiB * MiB);
  const table = [`label: dos`, `label-id: ${diskId}`, `unit: sectors`, ''];
  let startMiB = 1;
  for (const p of partitions) {
    table.push(`start=${startMiB * 2048}, size=${p.sizeMiB * 2048}, type=${p.type}${p.bootable ? ', bootable' : ''}`);
    startMiB += p.sizeMiB;
  }
  runTool('sfdisk', ['--no-reread', '--no-tell-kernel', '-q', out], { input: `${table.join('\n')}\n` });
  const fd = openSync(out, 'r+');
  try {
    writeSync(fd, readFileSync(mbrCode).subarray(0, 440), 0, 440, 0);
    let offset = MiB;
    for (const p of partitions) {
      if (p.file) {
        if (statSync(p.file).size > p.sizeMiB * MiB) throw new RangeError(`${p.file} is larger than its ${p.sizeMiB} MiB partition`);
        writeSync(fd, readFileSync(p.file), 0, undefined, offset);
      }
      offset += p.sizeMiB * MiB;
    }
  } finally {
    closeSync(fd);
  }
}
