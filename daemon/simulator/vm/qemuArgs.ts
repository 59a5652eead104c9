/** A VM as its BMC knows it: what inventory reports and what QEMU is started with. */
export interface VmConfig {
  /** Names the VM's files under `runDir` and the QEMU process (`-name`). */
  name: string;
  /** SMBIOS type 1 system UUID (`/sys/class/dmi/id/product_uuid` inside, `UUID` in Redfish). */
  uuid: string;
  cpus: number;
  memoryMiB: number;
  firmware: 'bios' | 'uefi';
  /** virtio-net NICs, each with a fixed MAC on an existing tap device. */
  nics: readonly { mac: string; tap: string }[];
  /**
   * virtio-blk disks backed by raw files, each with the serial number the guest reads. `hiddenFromBmc`: the guest has
   * it, the BMC's inventory does not list it (a disk added behind the BMC's back, or on a controller it cannot see).
   */
  disks: readonly { file: string; serial: string; hiddenFromBmc?: boolean }[];
  /** Where the QMP socket, serial log, UEFI variables and fetched media live. */
  runDir: string;
  /**
   * QEMU's accelerator. Default `tcg`: a Linux guest hung at kernel start under KVM on the hosts this was built on;
   * `kvm` is for hosts where it works (it needs a readable and writable /dev/kvm).
   */
  accel?: VmAccel;
  /**
   * QEMU's host cache for the disks (default QEMU's `writeback`). `none` opens the files with O_DIRECT: the host's page
   * cache then neither absorbs the guest's writes nor serves its reads (what a disk benchmark needs).
   */
  diskCache?: 'none' | 'writeback';
}

export const VmAccel = ['tcg', 'kvm'] as const;
export type VmAccel = (typeof VmAccel)[number];

/** What a power-on boots from: the override target, or `None` for the normal order (disk, CD, network). */
export type BootTarget = 'None' | 'Pxe' | 'Hdd' | 'Cd';

export interface VmFirmware {
  code: string;
  /** The VARS template copied once per VM (UEFI only). */
  varsTemplate: string;
}
export const debianOvmf: VmFirmware = { code: '/usr/share/OVMF/OVMF_CODE_4M.fd', varsTemplate: '/usr/share/OVMF/OVMF_VARS_4M.fd' };

/**
 * Boot priority by device class: firmware (SeaBIOS and OVMF alike) tries devices in `bootindex` order and falls
 * through an empty disk to the next, as a server falls through to PXE.
 */
function bootOrder(target: BootTarget): readonly ('disk' | 'cd' | 'nic')[] {
  if (target === 'Pxe') return ['nic', 'disk', 'cd'];
  if (target === 'Cd') return ['cd', 'disk', 'nic'];
  return ['disk', 'cd', 'nic'];
}

/**
 * The QEMU command line for one power-on: TCG unless the config asks for KVM, no display, the serial console to
 * a log file, QMP on a unix socket. `-no-reboot` turns a guest reboot into an exit so the BMC decides what the next
 * boot is (a spent `Once` override must not boot again); `-no-shutdown` is left out so a guest power-off ends QEMU.
 */
export function qemuArgs(
  config: VmConfig,
  paths: { qmp: string; serial: string; uefiVars?: string },
  boot: { target: BootTarget; cdImage?: string },
  firmware: VmFirmware = debianOvmf,
): string[] {
  const order = bootOrder(boot.target);
  let index = 1;
  const indexOf: Record<string, number[]> = { disk: [], cd: [], nic: [] };
  for (const kind of order) {
    const count = kind === 'disk' ? config.disks.length : kind === 'nic' ? config.nics.length : 1;
    for (let i = 0; i < count; i++) indexOf[kind]!.push(index++);
  }
  const args = [
    '-name',
    config.name,
    '-machine',
    'q35',
    '-accel',
    config.accel ?? 'tcg',
    '-smp',
    String(config.cpus),
    '-m',
    String(config.memoryMiB),
    '-smbios',
    `type=1,manufacturer=Better Compute,product=Emulated Server,uuid=${config.uuid}`,
    '-uuid',
    config.uuid,
    '-display',
    'none',
    '-vga',
    'none',
    '-no-reboot',
    '-serial',
    `file:${paths.serial}`,
    '-qmp',
    `unix:${paths.qmp},server=on,wait=off`,
    '-nodefaults',
    '-device',
    'virtio-rng-pci',
  ];
  if (config.firmware === 'uefi') {
    if (!paths.uefiVars) throw new RangeError('a UEFI VM needs its variables file');
    args.push('-drive', `if=pflash,format=raw,readonly=on,file=${firmware.code}`, '-drive', `if=pflash,format=raw,file=${paths.uefiVars}`);
  }
  config.disks.forEach((disk, i) => {
    args.push('-drive', `if=none,id=disk${i},format=raw,file=${disk.file}${config.diskCache ? `,cache=${config.diskCache}` : ''}`);
    args.push('-device', `virtio-blk-pci,drive=disk${i},id=disk${i}-dev,serial=${disk.serial},bootindex=${indexOf.disk![i]}`);
  });
  // The CD drive always exists (like a BMC's virtual CD), empty until media is inserted.
  args.push('-drive', `if=none,id=cd0,media=cdrom,readonly=on${boot.cdImage ? `,format=raw,file=${boot.cdImage}` : ''}`);
  args.push('-device', `ide-cd,drive=cd0,id=cd0-dev,bus=ide.2,bootindex=${indexOf.cd![0]}`);
  config.nics.forEach((nic, i) => {
    args.push('-netdev', `tap,id=net${i},ifname=${nic.tap},script=no,downscript=no`);
    // romfile= keeps UEFI on its own PXE client (which loads iPXE over TFTP); BIOS needs the NIC's iPXE ROM to PXE at all.
    const rom = config.firmware === 'uefi' ? ',romfile=' : '';
    args.push('-device', `virtio-net-pci,netdev=net${i},id=net${i}-dev,mac=${nic.mac}${rom},bootindex=${indexOf.nic![i]}`);
  });
  return args;
}
