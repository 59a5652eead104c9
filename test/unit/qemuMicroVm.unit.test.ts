import { describe, expect, it } from 'vitest';
import { microVmConfig } from '../../plugins/qemu-microvm/config.ts';
import { qemuCommand } from '../../plugins/qemu-microvm/qemuCommand.ts';
import { validInstanceId, vmPaths } from '../../plugins/qemu-microvm/vmFolder.ts';

describe('qemu-microvm runtime', () => {
  it('reads its pin arguments with their defaults, and refuses what it cannot use', () => {
    expect(microVmConfig(['--images', '/srv/images'])).toEqual({
      imagesDir: '/srv/images',
      accel: 'tcg',
      guestPorts: [22],
      stopGraceMs: 20_000,
      readyTimeoutMs: 180_000,
      qemu: 'qemu-system-x86_64',
      qemuImg: 'qemu-img',
    });
    expect(microVmConfig(['--images', '/i', '--guest-port', '80', '--guest-port', '443', '--ready-when', 'up', '--accel', 'kvm'])).toMatchObject({
      accel: 'kvm',
      guestPorts: [80, 443],
      readyWhen: 'up',
    });
    for (const argv of [
      [],
      ['--images', '/i', '--accel', 'hvf'],
      ['--images', '/i', '--guest-port', '70000'],
      ['--images', '/i', '--stop-grace-ms=-1'],
      ['--images', '/i', '--cpu', 'host'],
    ]) {
      expect(() => microVmConfig(argv)).toThrow(expect.objectContaining({ code: 'MICROVM_CONFIG_INVALID' }));
    }
  });

  it('starts a VM detached, on its overlay and read-only seed, forwarding only loopback ports, with QMP and a pidfile', () => {
    const config = microVmConfig(['--images', '/i', '--guest-port', '22']);
    const paths = vmPaths('/var/lib/bcd/plugins/qemu-microvm', 'vm-1');
    const argv = qemuCommand(config, paths, { name: 'bcx-vm-1', vcpus: 2, memoryMiB: 768, forwards: [{ host: 40022, guest: 22 }] }).join(' ');
    expect(argv).toContain('-accel tcg -smp 2 -m 768');
    expect(argv).toContain('-daemonize');
    expect(argv).toContain(`-pidfile ${paths.pidFile}`);
    expect(argv).toContain(`-qmp unix:${paths.qmpSocket},server=on,wait=off`);
    expect(argv).toContain(`if=none,id=root,format=qcow2,file=${paths.overlay}`);
    expect(argv).toContain(`if=none,id=seed,format=raw,readonly=on,file=${paths.seed}`);
    expect(argv).toContain('-netdev user,id=net0,hostfwd=tcp:127.0.0.1:40022-:22');
    expect(argv).toContain(`file,id=console,path=${paths.serialLog},append=on`);
  });

  it('keeps every VM under its state folder, with a QMP socket path that fits sun_path whatever the id', () => {
    const long = 'a'.repeat(128);
    expect(validInstanceId(long)).toBe(true);
    expect(vmPaths('/var/lib/bcd/plugins/qemu-microvm', long).qmpSocket.length).toBeLessThanOrEqual(107);
    for (const id of ['', '../etc', 'a/b', '.hidden', 'a'.repeat(129)]) expect(validInstanceId(id)).toBe(false);
    expect(() => vmPaths(`/${'d'.repeat(100)}`, 'vm-1')).toThrow(RangeError);
  });
});
