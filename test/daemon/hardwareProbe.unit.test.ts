import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseCpuinfo, probeHardware } from '../../daemon/ramdisk/hardwareProbe.ts';

const captured = fileURLToPath(new URL('../fixtures/hardwareProbe/captured-vm/', import.meta.url));

describe('hardware probe', () => {
  it('reads disks, NICs, CPUs and memory from a tree captured from a real Linux', async () => {
    const inventory = await probeHardware(captured);
    // vda: 536870912 sectors; loop0 (size 0 and a loop device) and lo/ifb0 (no `device`) are not hardware.
    expect(inventory.disks).toEqual([
      { name: 'vda', sizeBytes: 536_870_912 * 512, serial: '1786631317891696', model: null, rotational: true, removable: false },
    ]);
    expect(inventory.nics).toEqual([{ name: 'eth0', mac: '02:fc:00:00:00:01', link: 'up', speedMbps: null }]);
    expect(inventory.cpus).toEqual({ logical: 2, sockets: 1, cores: 2, model: 'AMD EPYC' });
    expect(inventory.memoryMiB).toBe(Math.floor(24_683_748 / 1024));
  });

  it('reads this machine, whatever it is: at least one disk and NIC, CPUs and memory', async () => {
    const inventory = await probeHardware('/');
    expect(inventory.disks.length).toBeGreaterThanOrEqual(1);
    expect(inventory.disks.every((d) => d.sizeBytes > 0)).toBe(true);
    expect(inventory.nics.length).toBeGreaterThanOrEqual(1);
    expect(inventory.cpus.logical).toBeGreaterThan(0);
    expect(inventory.memoryMiB).toBeGreaterThan(0);
  });

  it('counts sockets and their cores on a two-socket cpuinfo', () => {
    const cpu = (processor: number, socket: number) => `processor\t: ${processor}\nmodel name\t: Xeon\nphysical id\t: ${socket}\ncpu cores\t: 2\n`;
    expect(parseCpuinfo([cpu(0, 0), cpu(1, 0), cpu(2, 1), cpu(3, 1)].join('\n'))).toEqual({ logical: 4, sockets: 2, cores: 4, model: 'Xeon' });
  });

  it('fails with HARDWARE_UNREADABLE where procfs is missing', async () => {
    await expect(probeHardware('/nonexistent-root')).rejects.toMatchObject({ code: 'HARDWARE_UNREADABLE' });
  });
});
