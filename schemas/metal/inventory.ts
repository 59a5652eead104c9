import { z } from 'zod';
import { MacAddress } from './macAddress.ts';

/**
 * Hardware facts read from a BMC, in the shape the rest of the system stores and matches on. Unknown values are
 * `null` rather than guessed: BMCs differ a lot in what they expose (iLO hides disks behind OEM SmartStorage).
 */

export const InventoryDisk = z.object({
  id: z.string().min(1),
  // Not .int(): zod 4's int() stops at 2^53, and BMCs report byte counts beyond that (the DMTF mockup does).
  sizeBytes: z.number().nonnegative().nullable(),
  model: z.string().nullable(),
  serial: z.string().nullable(),
});
export type InventoryDisk = z.infer<typeof InventoryDisk>;

export const InventoryNic = z.object({
  id: z.string().min(1),
  mac: MacAddress,
  speedMbps: z.number().nonnegative().optional(),
  /** The IPv4 addresses the BMC sees on the NIC (a DHCP lease of the running OS); absent when it reports none. */
  ipv4Addresses: z.array(z.ipv4()).optional(),
});
export type InventoryNic = z.infer<typeof InventoryNic>;

export const InventoryCpus = z.object({
  count: z.number().int().nonnegative(),
  model: z.string().nullable(),
  cores: z.number().int().nonnegative().nullable(),
});
export type InventoryCpus = z.infer<typeof InventoryCpus>;

/**
 * One firmware component the BMC lists (`UpdateService.FirmwareInventory`, or `SoftwareInventory` on BMCs that keep
 * firmware there): BMC, BIOS, CPLD, NIC and drive firmware with their versions. The BMC's list, not the system's alone:
 * a BMC serving several systems lists theirs too.
 */
export const InventoryFirmware = z.object({
  id: z.string().min(1),
  name: z.string().nullable(),
  version: z.string().nullable(),
  updateable: z.boolean().optional(),
});
export type InventoryFirmware = z.infer<typeof InventoryFirmware>;

export const Inventory = z.object({
  manufacturer: z.string().nullable(),
  model: z.string().nullable(),
  serial: z.string().nullable(),
  // SMBIOS system UUID, lower-cased. z.guid, not z.uuid: SMBIOS UUIDs often fail RFC 9562 version/variant checks.
  productUuid: z.guid().nullable(),
  cpus: InventoryCpus,
  memoryMiB: z.number().int().nonnegative().nullable(),
  disks: z.array(InventoryDisk),
  nics: z.array(InventoryNic),
  /** Absent from inventories recorded before firmware was read, and where the agent reporting it cannot see it. */
  firmware: z.array(InventoryFirmware).optional(),
});
export type Inventory = z.infer<typeof Inventory>;

/**
 * A node's recorded addresses plus every IPv4 address its BMC reported on the NICs: what `site.httpProxy` may reach.
 * Inspections only add (a lease that moved leaves the old address recorded until the node is re-enrolled).
 */
export function withInventoryAddresses(addresses: readonly string[], inventory: Inventory): string[] {
  return [...new Set([...addresses, ...inventory.nics.flatMap((nic) => nic.ipv4Addresses ?? [])])];
}
