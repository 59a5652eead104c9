import type { MicroVmConfig } from './config.ts';
import type { VmPaths } from './vmFolder.ts';

export interface VmShape {
  readonly name: string;
  readonly vcpus: number;
  readonly memoryMiB: number;
  /** Host port on 127.0.0.1 → guest port, one user-mode `hostfwd` each. */
  readonly forwards: readonly { host: number; guest: number }[];
}

/**
 * The QEMU command line of one VM: its qcow2 overlay as the boot disk (the image's syslinux boots under SeaBIOS), the
 * NoCloud seed as a second read-only virtio disk (`/dev/vdb`, vfat labelled CIDATA), one virtio NIC on QEMU's
 * user-mode network (DHCP from QEMU, 10.0.2.15 inside, reachable from the host only through the forwarded ports), the
 * serial console appended to a log (kept across boots), QMP on a unix socket. `-daemonize` detaches QEMU from the
 * plugin: a VM outlives the plugin's crash or restart, and the plugin finds it again by pidfile and socket.
 */
export function qemuCommand(config: MicroVmConfig, paths: VmPaths, shape: VmShape): string[] {
  const forwards = shape.forwards.map((f) => `,hostfwd=tcp:127.0.0.1:${f.host}-:${f.guest}`).join('');
  return [
    '-name',
    shape.name,
    '-machine',
    'q35',
    '-accel',
    config.accel,
    '-smp',
    String(shape.vcpus),
    '-m',
    String(shape.memoryMiB),
    '-nodefaults',
    '-display',
    'none',
    '-vga',
    'none',
    '-chardev',
    `file,id=console,path=${paths.serialLog},append=on`,
    '-serial',
    'chardev:console',
    '-qmp',
    `unix:${paths.qmpSocket},server=on,wait=off`,
    '-pidfile',
    paths.pidFile,
    '-daemonize',
    '-drive',
    `if=none,id=root,format=qcow2,file=${paths.overlay}`,
    '-device',
    'virtio-blk-pci,drive=root,bootindex=1',
    '-drive',
    `if=none,id=seed,format=raw,readonly=on,file=${paths.seed}`,
    '-device',
    'virtio-blk-pci,drive=seed',
    '-netdev',
    `user,id=net0${forwards}`,
    // No option ROM: the VM boots from its disk, never from the network.
    '-device',
    'virtio-net-pci,netdev=net0,romfile=',
    '-device',
    'virtio-rng-pci',
  ];
}
