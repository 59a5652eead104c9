import { execFileSync } from 'node:child_process';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecutionContext } from '../../daemon/agent/commandRunner.ts';
import { writeCidata } from '../../daemon/ramdisk/cidataPartition.ts';
import { noCloudSeed } from '../../daemon/ramdisk/noCloudSeed.ts';
import { readNoCloudFile } from '../support/noCloudSeedOnDisk.ts';
import { tempDir } from '../support/natsServer.ts';

const ctx: ExecutionContext = { heartbeat: () => undefined, signal: new AbortController().signal };

/**
 * mkfs.fat picks the FAT type by the whole device under `--offset`: on a disk of 512 MiB or more it chose FAT32, which
 * cannot fit in the 2 MiB cidata partition, and the deploy failed (`Attempting to create a too small or a too large
 * filesystem`). The seed is FAT12 whatever the disk's size.
 */
describe('the NoCloud seed on a disk of 512 MiB or more', () => {
  const dir = tempDir('bc-cidata-large-');
  afterAll(() => dir[Symbol.dispose]());

  it('formats the cidata partition FAT12 and the seed reads back', async () => {
    const disk = join(dir.path, 'disk.raw');
    writeFileSync(disk, '');
    truncateSync(disk, 600 << 20);
    execFileSync('sfdisk', ['--quiet', '--no-reread', '--no-tell-kernel', disk], { input: 'label: dos\nstart=2048, size=8192, type=83\n' });
    const files = noCloudSeed({ instanceId: 'n1-wf1', hostname: 'n1', sshKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILargeDiskMarker x@bc'] });
    expect(await writeCidata(disk, files, ctx, { required: true })).toMatchObject({ written: true, table: 'dos', verified: true });
    expect(readNoCloudFile(disk, 'user-data')).toBe(files['user-data']);
  });
});
