import { z } from 'zod';
import { MacAddress } from './macAddress.ts';

/**
 * Hardware facts the ramdisk read from inside the machine (`hardware.probe`): Linux's sysfs and procfs, as the kernel
 * sees the hardware, independent of what the BMC says. Values the kernel does not expose are `null`, never guessed.
 */

/** A whole-disk block device (`/sys/block/<name>`); partitions, loop, RAM, device-mapper and md devices are not disks. */
export const InBandDisk = z.object({
  /** The kernel's name (`sda`, `nvme0n1`, `vda`). */
  name: z.string().min(1).max(64),
  // Not .int(): byte counts may pass 2^53 (see InventoryDisk).
  sizeBytes: z.number().nonnegative(),
  serial: z.string().max(256).nullable(),
  model: z.string().max(256).nullable(),
  /** `queue/rotational`: spinning media (or a device that claims so, as virtio and many RAID volumes do). */
  rotational: z.boolean().nullable(),
  /** `removable`: media that can leave the machine (the boot stick, a virtual CD); never compared with the BMC's drives. */
  removable: z.boolean(),
});
export type InBandDisk = z.infer<typeof InBandDisk>;

/** A physical network interface (`/sys/class/net/<name>` with a `device`): bridges, bonds, loopback and tunnels are not. */
export const InBandNic = z.object({
  name: z.string().min(1).max(64),
  mac: MacAddress,
  /** `operstate`: `up`, `down`, `unknown`, … as the kernel says it. */
  link: z.string().max(32),
  /** `speed` in Mbit/s; null when the link is down or the driver reports none (virtio: -1). */
  speedMbps: z.number().int().nonnegative().nullable(),
});
export type InBandNic = z.infer<typeof InBandNic>;

/** `/proc/cpuinfo`: logical CPUs, the distinct `physical id`s (sockets) and the sum of their `cpu cores`. */
export const InBandCpus = z.object({
  logical: z.number().int().positive(),
  sockets: z.number().int().positive(),
  /** Null where cpuinfo has no `cpu cores` (most non-x86 kernels). */
  cores: z.number().int().positive().nullable(),
  model: z.string().max(256).nullable(),
});
export type InBandCpus = z.infer<typeof InBandCpus>;

export const InBandInventory = z.object({
  disks: z.array(InBandDisk).max(1_024),
  nics: z.array(InBandNic).max(256),
  cpus: InBandCpus,
  /** `MemTotal` of `/proc/meminfo`: installed memory less what firmware and the kernel keep for themselves. */
  memoryMiB: z.number().int().positive(),
});
export type InBandInventory = z.infer<typeof InBandInventory>;
