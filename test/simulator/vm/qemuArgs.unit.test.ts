import { describe, expect, it } from 'vitest';
import { qemuArgs, type VmConfig } from '../../../daemon/simulator/vm/qemuArgs.ts';

const config: VmConfig = {
  name: 'n1',
  uuid: '6c1f5a3e-9f1d-4e4b-8a56-0b7f0c3d2e11',
  cpus: 2,
  memoryMiB: 1024,
  firmware: 'bios',
  nics: [{ mac: '52:54:00:12:34:56', tap: 'emut0' }],
  disks: [
    { file: '/d/n1-0.raw', serial: 'EMU-N1-D0' },
    { file: '/d/n1-1.raw', serial: 'EMU-N1-D1' },
  ],
  runDir: '/run/n1',
};
const paths = { qmp: '/run/n1.qmp', serial: '/run/n1.serial.log' };
const devices = (args: string[]) => args.filter((_, i) => args[i - 1] === '-device');
const bootIndexOf = (args: string[], id: string) => Number(/bootindex=(\d+)/.exec(devices(args).find((d) => d.includes(`id=${id}`))!)![1]);

describe('QEMU command line', () => {
  it('runs under TCG with the SMBIOS UUID, a fixed MAC on the tap, serial-numbered disks and QMP', () => {
    const args = qemuArgs(config, paths, { target: 'None' });
    expect(args.join(' ')).toContain('-accel tcg');
    expect(args).toContain('type=1,manufacturer=Better Compute,product=Emulated Server,uuid=6c1f5a3e-9f1d-4e4b-8a56-0b7f0c3d2e11');
    expect(args).toContain('tap,id=net0,ifname=emut0,script=no,downscript=no');
    expect(devices(args).find((d) => d.startsWith('virtio-net-pci'))).toContain('mac=52:54:00:12:34:56');
    expect(
      devices(args)
        .filter((d) => d.startsWith('virtio-blk-pci'))
        .map((d) => /serial=([^,]+)/.exec(d)![1]),
    ).toEqual(['EMU-N1-D0', 'EMU-N1-D1']);
    expect(args).toContain('unix:/run/n1.qmp,server=on,wait=off');
    expect(args).toContain('-no-reboot');
    expect(args).not.toContain('-no-shutdown');
  });

  it('runs under KVM when the config asks for it, and only then', () => {
    expect(qemuArgs({ ...config, accel: 'kvm' }, paths, { target: 'None' }).join(' ')).toContain('-accel kvm');
    expect(qemuArgs({ ...config, accel: 'kvm' }, paths, { target: 'None' })).not.toContain('tcg');
    expect(qemuArgs({ ...config, accel: 'tcg' }, paths, { target: 'None' }).join(' ')).toContain('-accel tcg');
  });

  it('bypasses the host page cache for the disks when the config says cache none', () => {
    expect(qemuArgs({ ...config, diskCache: 'none' }, paths, { target: 'None' })).toContain('if=none,id=disk0,format=raw,file=/d/n1-0.raw,cache=none');
    expect(qemuArgs(config, paths, { target: 'None' })).toContain('if=none,id=disk0,format=raw,file=/d/n1-0.raw');
  });

  it('boots disks first, then CD, then network when no override is set', () => {
    const args = qemuArgs(config, paths, { target: 'None' });
    expect([bootIndexOf(args, 'disk0-dev'), bootIndexOf(args, 'disk1-dev'), bootIndexOf(args, 'cd0-dev'), bootIndexOf(args, 'net0-dev')]).toEqual([1, 2, 3, 4]);
  });

  it('puts the NIC first for Pxe and the CD first for Cd', () => {
    const pxe = qemuArgs(config, paths, { target: 'Pxe' });
    expect(bootIndexOf(pxe, 'net0-dev')).toBe(1);
    expect(bootIndexOf(pxe, 'disk0-dev')).toBe(2);
    const cd = qemuArgs(config, paths, { target: 'Cd', cdImage: '/run/n1.media.iso' });
    expect(bootIndexOf(cd, 'cd0-dev')).toBe(1);
    expect(cd).toContain('if=none,id=cd0,media=cdrom,readonly=on,format=raw,file=/run/n1.media.iso');
  });

  it('gives UEFI its firmware and variables and keeps the NIC option ROM out (UEFI PXE loads iPXE over TFTP)', () => {
    const uefi = qemuArgs({ ...config, firmware: 'uefi' }, { ...paths, uefiVars: '/run/n1.vars.fd' }, { target: 'Pxe' });
    expect(uefi).toContain('if=pflash,format=raw,file=/run/n1.vars.fd');
    expect(devices(uefi).find((d) => d.startsWith('virtio-net-pci'))).toContain('romfile=,');
    expect(() => qemuArgs({ ...config, firmware: 'uefi' }, paths, { target: 'None' })).toThrow(RangeError);
  });
});
