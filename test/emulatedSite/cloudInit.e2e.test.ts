import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionContext } from '../../daemon/agent/commandRunner.ts';
import { writeCidata } from '../../daemon/ramdisk/cidataPartition.ts';
import { noCloudSeed } from '../../daemon/ramdisk/noCloudSeed.ts';
import { QemuVm } from '../../daemon/simulator/vm/qemuVm.ts';
import { requireTools } from '../../scripts/emulatedSite/hostTools.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { waitForLog } from './harness.ts';
import { catFile, rootFilesystemOf } from './rootFilesystem.ts';
import { sharedHostImage } from './sharedHostImage.ts';

/**
 * User data that lands: the built host image on a VM's disk, with the NoCloud seed the deploy writes (the real
 * cidata writer, a marker SSH key, `write_files` and `runcmd`), boots under QEMU; Debian's cloud-init in it reports
 * its result on the serial console, and the key is read back from the root filesystem the VM left on the disk.
 */
const scratch = mkdtempSync(join(tmpdir(), 'emusite-cloudinit-'));
const MARKER_KEY = `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${randomUUID().replace(/-/g, '')} cloudinit-e2e@bc`;
const ctx: ExecutionContext = { heartbeat: () => undefined, signal: new AbortController().signal };
let vm: QemuVm | undefined;

describe('cloud-init in the deployable host image', () => {
  beforeAll(() => requireTools(['qemu-system-x86_64', 'mke2fs', 'mkfs.vfat', 'syslinux', 'mcopy', 'sfdisk', 'debugfs', 'e2fsck']));

  afterAll(async () => {
    await vm?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('applies the seed at first boot: key in root authorized_keys, write_files and runcmd done, no errors', async () => {
    // BC_HOST_IMAGE: an image `npm run build:image` just made (its disk.raw), instead of the run's shared build.
    const image = process.env.BC_HOST_IMAGE
      ? { image: process.env.BC_HOST_IMAGE, sizeBytes: statSync(process.env.BC_HOST_IMAGE).size }
      : await sharedHostImage();

    // The disk is larger than the image, as a deployed one is: the cidata partition goes at its end.
    const disk = join(scratch, 'n1-disk0.raw');
    copyFileSync(image.image, disk);
    truncateSync(disk, image.sizeBytes + (16 << 20));
    const files = noCloudSeed({
      instanceId: `ci-${randomUUID()}`,
      hostname: 'ci-n1',
      sshKeys: [MARKER_KEY],
      userData: [
        '#cloud-config',
        'write_files:',
        '  - path: /var/lib/bc-marker',
        '    content: written by cloud-init write_files',
        'runcmd:',
        // The console shows the output (42), not the command: only a command that ran prints it.
        "  - [sh, -c, 'echo bc-runcmd-marker-$((6 * 7))']",
        '',
      ].join('\n'),
    });
    expect(await writeCidata(disk, files, ctx, { required: true })).toMatchObject({ written: true, table: 'dos' });

    vm = new QemuVm({
      config: {
        name: 'ci',
        uuid: randomUUID(),
        cpus: 1,
        memoryMiB: 768,
        firmware: 'bios',
        nics: [],
        disks: [{ file: disk, serial: 'EMU-CI-D0' }],
        runDir: join(scratch, 'vm'),
      },
      log: createLogger('cloudinit-e2e', 'warn'),
    });
    await vm.start({ target: 'Hdd' });
    const serial = await waitForLog('cloud-init result', vm.paths.serial, /bc-host: cloud-init result [^\n]*\n/, 420_000);
    expect(serial).toMatch(/bc-host: cloud-init status: done /);
    expect(serial).toMatch(/bc-host: cloud-init result \{.*"datasource": "DataSourceNoCloud \[seed=\/dev\/vda\d\]/);
    expect(serial).toMatch(/bc-host: cloud-init result \{.*"errors": \[\]/);
    expect(serial).toMatch(/^bc-runcmd-marker-42\r?$/m);
    expect(serial).not.toMatch(/bc-host: cloud-init .* exited with status/);

    // A clean power-off (the image's ACPI button handler syncs), then the root filesystem as the VM left it.
    await vm.powerButton();
    await waitForLog('power-off', vm.paths.serial, /reboot: Power down/, 120_000).catch(() => undefined);
    await vm.stop();
    vm = undefined;
    const root = rootFilesystemOf(disk, join(scratch, 'root.ext4'));
    const cat = (path: string) => catFile(root, path);
    expect(cat('/root/.ssh/authorized_keys').split('\n')).toContain(MARKER_KEY);
    expect(cat('/var/lib/bc-marker')).toBe('written by cloud-init write_files');
  }, 900_000);
});
