import type { InBandInventory } from '../../../schemas/metal/inBandInventory.ts';
import type { Inventory } from '../../../schemas/metal/inventory.ts';
import type { InventoryFinding } from '../../../schemas/metal/inventoryFinding.ts';

/** The kernel keeps firmware-reserved and its own memory out of `MemTotal`; below this share of the BMC's figure is a finding. */
const MEMORY_FLOOR = 0.75;

const serialKey = (serial: string | null) => serial?.trim().toLowerCase() || undefined;
const bytes = (n: number | null) => (n === null ? 'an unknown size' : `${n} bytes`);

/**
 * Disks are matched by serial where both sides have one, then by size among the rest (virtio and some RAID volumes
 * show the kernel no serial). A BMC that lists no drive at all cannot see them (iLO's SmartStorage): nothing to compare.
 */
function diskFindings(bmc: Inventory['disks'], inBand: InBandInventory['disks']): InventoryFinding[] {
  if (bmc.length === 0) return [];
  const findings: InventoryFinding[] = [];
  const unmatched = new Set(bmc);
  const seen = inBand.filter((d) => !d.removable);
  const bySize: InBandInventory['disks'] = [];
  for (const disk of seen) {
    const key = serialKey(disk.serial);
    const twin = key === undefined ? undefined : [...unmatched].find((d) => serialKey(d.serial) === key);
    if (!twin) {
      bySize.push(disk);
      continue;
    }
    unmatched.delete(twin);
    if (twin.sizeBytes !== null && twin.sizeBytes !== disk.sizeBytes) {
      findings.push({
        code: 'DISK_SIZE_MISMATCH',
        subject: disk.serial!,
        detail: `${disk.name} (serial ${disk.serial}) has ${disk.sizeBytes} bytes; the BMC reports ${bytes(twin.sizeBytes)}`,
      });
    }
  }
  for (const disk of bySize) {
    const twin = [...unmatched].find((d) => d.sizeBytes === disk.sizeBytes && (serialKey(d.serial) === undefined || serialKey(disk.serial) === undefined));
    if (twin) unmatched.delete(twin);
    else {
      findings.push({
        code: 'DISK_NOT_REPORTED_BY_BMC',
        subject: disk.serial ?? disk.name,
        detail: `${disk.name} (${disk.sizeBytes} bytes, serial ${disk.serial ?? 'none'}, model ${disk.model ?? 'unknown'}) is not among the BMC's ${bmc.length} drive(s)`,
      });
    }
  }
  for (const drive of unmatched) {
    findings.push({
      code: 'DISK_NOT_SEEN_IN_BAND',
      subject: drive.serial ?? drive.id,
      detail: `the BMC lists drive ${drive.id} (${bytes(drive.sizeBytes)}, serial ${drive.serial ?? 'none'}); the machine's kernel does not see it`,
    });
  }
  return findings;
}

function nicFindings(bmc: Inventory['nics'], inBand: InBandInventory['nics']): InventoryFinding[] {
  const bmcMacs = new Set(bmc.map((n) => n.mac));
  const inBandMacs = new Set(inBand.map((n) => n.mac));
  return [
    ...(bmc.length === 0
      ? []
      : inBand
          .filter((n) => !bmcMacs.has(n.mac))
          .map((n): InventoryFinding => ({
            code: 'NIC_NOT_REPORTED_BY_BMC',
            subject: n.mac,
            detail: `${n.name} (${n.mac}, link ${n.link}) is not among the BMC's NICs`,
          }))),
    ...bmc
      .filter((n) => !inBandMacs.has(n.mac))
      .map((n): InventoryFinding => ({
        code: 'NIC_NOT_SEEN_IN_BAND',
        subject: n.mac,
        detail: `the BMC lists NIC ${n.id} (${n.mac}); the machine's kernel does not see it`,
      })),
  ];
}

/**
 * BMCs count processors as sockets (Redfish `ProcessorSummary.Count`), as cores, or (VM-backed BMCs) as vCPUs: a
 * count is a finding only when it is none of those seen inside.
 */
function cpuFindings(bmc: Inventory['cpus'], inBand: InBandInventory['cpus']): InventoryFinding[] {
  if (bmc.count === 0) return [];
  const inside = [inBand.sockets, inBand.cores, inBand.logical].filter((n): n is number => n !== null);
  if (inside.includes(bmc.count)) return [];
  return [
    {
      code: 'CPU_COUNT_MISMATCH',
      subject: 'cpus',
      detail: `the BMC reports ${bmc.count} processor(s); the kernel sees ${inBand.sockets} socket(s), ${inBand.cores ?? 'unknown'} core(s), ${inBand.logical} logical CPU(s)`,
    },
  ];
}

function memoryFindings(bmcMiB: number | null, inBandMiB: number): InventoryFinding[] {
  if (bmcMiB === null || bmcMiB === 0) return [];
  if (inBandMiB <= bmcMiB && inBandMiB >= bmcMiB * MEMORY_FLOOR) return [];
  return [{ code: 'MEMORY_MISMATCH', subject: 'memory', detail: `the BMC reports ${bmcMiB} MiB; the kernel sees ${inBandMiB} MiB` }];
}

/** What the machine showed from inside that its BMC's inventory does not say: none when they agree. */
export function inventoryFindings(bmc: Inventory, inBand: InBandInventory): InventoryFinding[] {
  return [
    ...diskFindings(bmc.disks, inBand.disks),
    ...nicFindings(bmc.nics, inBand.nics),
    ...cpuFindings(bmc.cpus, inBand.cpus),
    ...memoryFindings(bmc.memoryMiB, inBand.memoryMiB),
  ];
}
