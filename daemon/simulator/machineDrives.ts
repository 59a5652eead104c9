import type { BmcSimulator } from './bmc/index.ts';
import { linkId, touch, type Json } from './bmc/treeStore.ts';

const membersOf = (doc: Json | undefined): string[] => (Array.isArray(doc?.Members) ? doc.Members : []).flatMap((m) => linkId(m) ?? []);

/** The system's drive bays in the order an inspection reads them: each Storage member's `Drives`, first seen first. */
function driveBays(bmc: Pick<BmcSimulator, 'resource'>): Json[] {
  const system = bmc.resource(membersOf(bmc.resource('/redfish/v1/Systems'))[0] ?? '');
  const storage = linkId(system?.Storage);
  const seen = new Set<string>();
  const bays: Json[] = [];
  for (const controller of membersOf(storage ? bmc.resource(storage) : undefined)) {
    const drives = bmc.resource(controller)?.Drives;
    for (const uri of (Array.isArray(drives) ? drives : []).flatMap((d) => linkId(d) ?? [])) {
      const drive = bmc.resource(uri);
      if (!drive || seen.has(uri.toLowerCase())) continue;
      seen.add(uri.toLowerCase());
      bays.push(drive);
    }
  }
  return bays;
}

/** A disk the simulated machine has, as its BMC must report it. */
export interface FittedDrive {
  readonly serial: string;
  readonly sizeBytes: number;
}

/**
 * Makes the BMC report the machine's own disks, as a real BMC reports the drives in its bays: the first bays hold
 * the disks (their size and serial; the bay's model, if it names one), every other bay is empty (`Absent`). Returns
 * each disk's model. A tree without Storage (iLO keeps its disks behind OEM SmartStorage) reports no drives at all,
 * like the hardware it was taken from.
 */
export function fitDrivesToDisks(bmc: Pick<BmcSimulator, 'resource'>, disks: readonly FittedDrive[]): (string | null)[] {
  const bays = driveBays(bmc);
  if (bays.length === 0) return disks.map(() => null);
  if (bays.length < disks.length) throw new Error(`the BMC's tree has ${bays.length} drive bays for ${disks.length} disks`);
  const models: (string | null)[] = [];
  for (const [i, bay] of bays.entries()) {
    const disk = disks[i];
    if (disk) {
      const model = typeof bay.Model === 'string' ? bay.Model : 'Simulated Disk';
      Object.assign(bay, { Status: { State: 'Enabled', Health: 'OK' }, CapacityBytes: disk.sizeBytes, SerialNumber: disk.serial, Model: model });
      models.push(model);
    } else {
      bay.Status = { State: 'Absent', Health: 'OK' };
      delete bay.CapacityBytes;
      delete bay.SerialNumber;
    }
    touch(bay);
  }
  return models;
}
