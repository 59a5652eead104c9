import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discoverDisks } from '../../daemon/ramdisk/blockDevices.ts';
import { tempDir } from '../support/natsServer.ts';

/** A sysfs tree as the kernel lays it out: /sys/block/<name> links into /sys/devices, attributes as files. */
function fakeSysfs(root: string, devices: Record<string, { at: string; files: Record<string, string | Buffer> }>): void {
  mkdirSync(join(root, 'block'), { recursive: true });
  for (const [name, device] of Object.entries(devices)) {
    const dir = join(root, 'devices', device.at, name);
    for (const [file, content] of Object.entries(device.files)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), content);
    }
    symlinkSync(join('..', 'devices', device.at, name), join(root, 'block', name));
  }
}

const vpd80 = (serial: string) => Buffer.concat([Buffer.from([0, 0x80, 0, serial.length]), Buffer.from(serial, 'latin1')]);

describe('ramdisk disk discovery from sysfs', () => {
  const dir = tempDir('bc-sysfs-');
  afterAll(() => dir[Symbol.dispose]());

  it('finds every whole disk with media and its serial and model (virtio, NVMe, SCSI), and nothing that is not a tenant disk', async () => {
    const disk = (extra: Record<string, string | Buffer> = {}) => ({ size: '2097152\n', ro: '0\n', removable: '0\n', ...extra });
    fakeSysfs(dir.path, {
      vda: { at: 'pci0000:00/virtio2/block', files: disk({ serial: 'QEMU-DISK-1\n' }) },
      nvme0n1: { at: 'pci0000:00/nvme/nvme0', files: disk({ 'device/serial': '  S4EWNX0R123456  \n', 'device/model': 'Samsung SSD 980 PRO 1TB \n' }) },
      sda: {
        at: 'pci0000:00/ata1/host0/target0:0:0/0:0:0:0/block',
        files: disk({ 'device/vpd_pg80': vpd80('WD-WCC4N1234567'), 'device/model': 'WDC WD40EFRX-68N\n' }),
      },
      sdb: { at: 'usb1/1-1/host6/block', files: disk({ removable: '1\n' }) },
      sdc: { at: 'pci0000:00/ata2/host1/block', files: disk({ size: '0\n' }) },
      sdd: { at: 'pci0000:00/ata3/host2/block', files: disk({ ro: '1\n' }) },
      loop0: { at: 'virtual/block', files: disk() },
      sr0: { at: 'pci0000:00/ata4/host3/block', files: disk() },
      md127: { at: 'virtual/block', files: disk() },
      zram0: { at: 'virtual/block', files: disk() },
      mmcblk0boot0: { at: 'platform/mmc0/block', files: disk() },
    });
    expect(await discoverDisks(dir.path, '/dev')).toEqual([
      { path: '/dev/nvme0n1', serial: 'S4EWNX0R123456', model: 'Samsung SSD 980 PRO 1TB' },
      { path: '/dev/sda', serial: 'WD-WCC4N1234567', model: 'WDC WD40EFRX-68N' },
      { path: '/dev/vda', serial: 'QEMU-DISK-1', model: null },
    ]);
  });
});
