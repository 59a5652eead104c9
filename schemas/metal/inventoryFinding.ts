import { z } from 'zod';

/**
 * What an in-band inspection found that the BMC's inventory does not say (`services/metal/node/inventoryFindings.ts`):
 * - `DISK_NOT_REPORTED_BY_BMC`: a disk the machine has and the BMC does not list (added behind the BMC's back, or on
 *   a controller it cannot see); not raised when the BMC lists no disk at all (iLO keeps them behind OEM SmartStorage).
 * - `DISK_NOT_SEEN_IN_BAND`: a drive the BMC lists that the ramdisk's kernel does not see (no driver, failed, pulled).
 * - `DISK_SIZE_MISMATCH`: the same serial with a different size.
 * - `NIC_NOT_REPORTED_BY_BMC` / `NIC_NOT_SEEN_IN_BAND`: a MAC on one side only.
 * - `CPU_COUNT_MISMATCH`: the BMC's processor count is neither the sockets, the cores nor the logical CPUs seen inside.
 * - `MEMORY_MISMATCH`: the kernel sees more memory than the BMC reports, or less than 75% of it.
 */
export const InventoryFindingCode = z.enum([
  'DISK_NOT_REPORTED_BY_BMC',
  'DISK_NOT_SEEN_IN_BAND',
  'DISK_SIZE_MISMATCH',
  'NIC_NOT_REPORTED_BY_BMC',
  'NIC_NOT_SEEN_IN_BAND',
  'CPU_COUNT_MISMATCH',
  'MEMORY_MISMATCH',
]);
export type InventoryFindingCode = z.infer<typeof InventoryFindingCode>;

export const InventoryFinding = z.object({
  code: InventoryFindingCode,
  /** What it is about: a disk (`serial` or kernel name), a MAC, `cpus` or `memory`. */
  subject: z.string().max(300),
  /** What each side said, for people. */
  detail: z.string().max(1_000),
});
export type InventoryFinding = z.infer<typeof InventoryFinding>;
