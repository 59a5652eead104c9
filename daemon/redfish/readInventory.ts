import { isIPv4 } from 'node:net';
import type { ClientContext } from './clientContext.ts';
import type { RedfishResource } from './http.ts';
import { Inventory, InventoryCpus, type InventoryDisk, type InventoryNic } from '../../schemas/metal/inventory.ts';
import { arr, linkOf, num, obj, str, text, type Json } from './json.ts';
import { firmwareComponents } from './firmware.ts';
import { idOf, members, optional } from './links.ts';

const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function isAbsent(resource: Json): boolean {
  return obj(resource.Status).State === 'Absent';
}

function normaliseMac(value: unknown): string | undefined {
  const hex = (str(value) ?? '').toLowerCase().replace(/[^0-9a-f]/g, '');
  return hex.length === 12 && hex !== '000000000000' ? hex.match(/../g)?.join(':') : undefined;
}

/** Reads every member of the collection linked from `from`, skipping members that vanish or fail to load. */
async function readMembers(ctx: ClientContext, from: Json, name: string): Promise<RedfishResource[]> {
  const collection = linkOf(from, name);
  if (collection === undefined) return [];
  const uris = (await optional(() => members(ctx.http, collection))) ?? [];
  const loaded: RedfishResource[] = [];
  for (const uri of uris) {
    const resource = await optional(() => ctx.http.get(uri));
    if (resource && !isAbsent(resource.body)) loaded.push(resource);
  }
  return loaded;
}

async function readCpus(ctx: ClientContext, system: Json): Promise<InventoryCpus> {
  // GPUs and FPGAs are Processors too; only CPUs count here.
  const cpus = (await readMembers(ctx, system, 'Processors')).filter((p) => (str(p.body.ProcessorType) ?? 'CPU') === 'CPU');
  const summary = obj(system.ProcessorSummary);
  if (cpus.length === 0) {
    return { count: num(summary.Count) ?? 0, model: text(summary.Model), cores: num(summary.CoreCount) ?? null };
  }
  const cores = cpus.map((p) => num(p.body.TotalCores));
  return {
    count: cpus.length,
    model: cpus.map((p) => text(p.body.Model)).find((m) => m !== null) ?? text(summary.Model),
    cores: cores.every((c) => c !== undefined) ? cores.reduce<number>((sum, c) => sum + (c ?? 0), 0) : (num(summary.CoreCount) ?? null),
  };
}

async function readMemoryMiB(ctx: ClientContext, system: Json): Promise<number | null> {
  const gib = num(obj(system.MemorySummary).TotalSystemMemoryGiB);
  if (gib !== undefined) return Math.round(gib * 1024);
  const dimms = await readMembers(ctx, system, 'Memory');
  const sizes = dimms.map((d) => num(d.body.CapacityMiB)).filter((s): s is number => s !== undefined);
  return sizes.length === 0 ? null : sizes.reduce((sum, s) => sum + s, 0);
}

async function readDisks(ctx: ClientContext, system: Json): Promise<InventoryDisk[]> {
  const disks = new Map<string, InventoryDisk>();
  for (const storage of await readMembers(ctx, system, 'Storage')) {
    for (const link of arr(storage.body.Drives)) {
      const uri = linkOf(link);
      if (uri === undefined || disks.has(uri)) continue;
      const drive = await optional(() => ctx.http.get(uri));
      if (!drive || isAbsent(drive.body)) continue;
      disks.set(uri, {
        id: idOf(drive),
        sizeBytes: num(drive.body.CapacityBytes) ?? null,
        model: text(drive.body.Model),
        serial: text(drive.body.SerialNumber),
      });
    }
  }
  if (disks.size > 0) return [...disks.values()];
  // SimpleStorage is the pre-Storage schema some older BMCs still only offer.
  const simple: InventoryDisk[] = [];
  for (const controller of await readMembers(ctx, system, 'SimpleStorage')) {
    for (const device of arr(controller.body.Devices).map(obj)) {
      if (isAbsent(device)) continue;
      const name = text(device.Name) ?? String(simple.length);
      simple.push({
        id: `${idOf(controller)}/${name}`,
        sizeBytes: num(device.CapacityBytes) ?? null,
        model: text(device.Model),
        serial: null,
      });
    }
  }
  return simple;
}

/** `IPv4Addresses[].Address`, without the placeholders BMCs report for an unconfigured port (empty, 0.0.0.0). */
function ipv4AddressesOf(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const addresses = value.map((entry) => str(obj(entry).Address));
  return [...new Set(addresses.filter((a): a is string => a !== undefined && isIPv4(a) && a !== '0.0.0.0'))];
}

/**
 * One entry per MAC. BMCs list a port more than once (as an EthernetInterface and again under a second collection or
 * id, or one MAC on two logical interfaces): the first id is kept, addresses are merged, the fastest speed wins.
 */
async function readNics(ctx: ClientContext, system: Json): Promise<InventoryNic[]> {
  const byMac = new Map<string, InventoryNic>();
  for (const nic of await readMembers(ctx, system, 'EthernetInterfaces')) {
    const mac = normaliseMac(nic.body.MACAddress) ?? normaliseMac(nic.body.PermanentMACAddress);
    if (mac === undefined) continue;
    const speed = num(nic.body.SpeedMbps);
    const ipv4 = ipv4AddressesOf(nic.body.IPv4Addresses);
    const seen = byMac.get(mac);
    const speeds = [seen?.speedMbps, speed].filter((v): v is number => v !== undefined);
    const addresses = [...new Set([...(seen?.ipv4Addresses ?? []), ...ipv4])];
    byMac.set(mac, {
      id: seen?.id ?? idOf(nic),
      mac,
      ...(speeds.length > 0 ? { speedMbps: Math.max(...speeds) } : {}),
      ...(addresses.length > 0 ? { ipv4Addresses: addresses } : {}),
    });
  }
  return [...byMac.values()];
}

/** Each part is read independently and tolerates a missing link: a BMC without Storage still has CPUs. */
export async function getInventory(ctx: ClientContext): Promise<Inventory> {
  const system = (await ctx.discovery.system()).body;
  const uuid = (str(system.UUID) ?? '').toLowerCase();
  return Inventory.parse({
    manufacturer: text(system.Manufacturer),
    model: text(system.Model),
    serial: text(system.SerialNumber),
    productUuid: guid.test(uuid) ? uuid : null,
    cpus: await readCpus(ctx, system),
    memoryMiB: await readMemoryMiB(ctx, system),
    disks: await readDisks(ctx, system),
    nics: await readNics(ctx, system),
    firmware: (await firmwareComponents(ctx)).map((component) => component.firmware),
  });
}
