import type { ClientContext } from './clientContext.ts';
import type { InventoryFirmware } from '../../schemas/metal/inventory.ts';
import { linkOf, obj, text } from './json.ts';
import { idOf, members, optional } from './links.ts';

/** A firmware version the BMC reports, by the resource (and property) it is read from. */
export interface FirmwareVersion {
  /** `@odata.id` of the inventory item, or `<uri>#<Property>` for a version a system or manager carries. */
  source: string;
  id: string;
  version: string | null;
}

/**
 * The firmware components of `UpdateService.FirmwareInventory`, else of `SoftwareInventory` (the Intel S2600 BMC keeps
 * its BMC, BIOS, ME and SDR versions there); none where the service lists neither. Absent components are left out.
 */
export async function firmwareComponents(ctx: ClientContext): Promise<{ uri: string; firmware: InventoryFirmware }[]> {
  const updateUri = linkOf(await ctx.discovery.root(), 'UpdateService');
  const update = updateUri === undefined ? undefined : await optional(() => ctx.http.get(updateUri));
  const collection = linkOf(update?.body, 'FirmwareInventory') ?? linkOf(update?.body, 'SoftwareInventory');
  if (collection === undefined) return [];
  const found: { uri: string; firmware: InventoryFirmware }[] = [];
  for (const uri of (await optional(() => members(ctx.http, collection))) ?? []) {
    const item = await optional(() => ctx.http.get(uri));
    if (!item || obj(item.body.Status).State === 'Absent') continue;
    const updateable = item.body.Updateable;
    found.push({
      uri: item.uri,
      firmware: { id: idOf(item), name: text(item.body.Name), version: text(item.body.Version), ...(typeof updateable === 'boolean' ? { updateable } : {}) },
    });
  }
  return found;
}

/**
 * Every firmware version the service shows: its firmware inventory, the system's `BiosVersion` and its managers'
 * `FirmwareVersion` (a service without an inventory, such as sushy-tools, shows an update only there).
 */
export async function firmwareVersions(ctx: ClientContext): Promise<FirmwareVersion[]> {
  const versions = (await firmwareComponents(ctx)).map(({ uri, firmware }) => ({ source: uri, id: firmware.id, version: firmware.version }));
  const system = await ctx.discovery.system();
  versions.push({ source: `${system.uri}#BiosVersion`, id: 'BiosVersion', version: text(system.body.BiosVersion) });
  for (const uri of await ctx.discovery.managers()) {
    const manager = await optional(() => ctx.http.get(uri));
    if (manager)
      versions.push({ source: `${manager.uri}#FirmwareVersion`, id: `${idOf(manager)} FirmwareVersion`, version: text(manager.body.FirmwareVersion) });
  }
  return versions;
}
