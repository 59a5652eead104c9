import type { Inventory, InventoryDisk } from '../../../schemas/metal/inventory.ts';
import { erasedBytesOf, WipeReport, type WipedDisk } from '../../../schemas/agent/diskWipe.ts';

/** Whether a signed wipe result covers the node: the report it carried, or every reason it does not. */
export type WipeCoverage = { readonly covered: true; readonly report: WipeReport } | { readonly covered: false; readonly reason: string };

const sameSerial = (a: string | null, b: string | null) => a !== null && b !== null && a.trim().toLowerCase() === b.trim().toLowerCase();

const describe = (disk: InventoryDisk) => `${disk.id} (serial ${disk.serial ?? 'unknown'}, ${disk.sizeBytes ?? 'unknown'} bytes)`;

/**
 * Checks a wipe result against the node's recorded inventory (the drives its BMC listed at inspection). Covered
 * only when the result names at least one disk, every disk in it was erased end to end (zero: every byte read back;
 * discard: every byte discarded and a sample read back), and every inventory drive is among them with the same size:
 * matched by serial, or by size for a drive whose BMC reports no serial. A drive with neither cannot be matched and
 * fails the check. Disks the ramdisk wiped beyond the inventory are fine. With no inventory recorded (a node never
 * inspected), the result's own disks are all there is to check.
 */
export function wipeCoverage(payload: unknown, inventory: Inventory | null | undefined): WipeCoverage {
  const parsed = WipeReport.safeParse(payload);
  if (!parsed.success)
    return { covered: false, reason: `the wipe result does not say which disks were erased and how (${parsed.error.issues[0]?.message ?? 'invalid'})` };
  const report = parsed.data;
  const problems: string[] = [];
  for (const disk of report.disks) {
    const erased = erasedBytesOf(disk);
    if (erased !== disk.sizeBytes) problems.push(`${disk.path} was erased over ${erased} of its ${disk.sizeBytes} bytes`);
  }
  const claimed = new Set<WipedDisk>();
  const drives = inventory?.disks ?? [];
  // Drives with a serial claim their disk first, so a serial-less drive cannot take a disk that is another's.
  for (const drive of [...drives.filter((d) => d.serial !== null), ...drives.filter((d) => d.serial === null)]) {
    if (drive.serial === null && drive.sizeBytes === null) {
      problems.push(`drive ${drive.id} has neither a serial nor a size: no wiped disk can be matched to it`);
      continue;
    }
    const match =
      drive.serial !== null
        ? report.disks.find((d) => sameSerial(d.serial, drive.serial))
        : report.disks.find((d) => !claimed.has(d) && d.sizeBytes === drive.sizeBytes);
    if (!match) {
      problems.push(`drive ${describe(drive)} is not in the wipe result`);
      continue;
    }
    claimed.add(match);
    if (drive.sizeBytes !== null && match.sizeBytes !== drive.sizeBytes) {
      problems.push(`drive ${describe(drive)} was wiped as ${match.path} of ${match.sizeBytes} bytes`);
    }
  }
  return problems.length === 0 ? { covered: true, report } : { covered: false, reason: problems.join('; ') };
}
