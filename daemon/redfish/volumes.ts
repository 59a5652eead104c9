import type { ClientContext } from './clientContext.ts';
import { settled } from './context.ts';
import { RedfishError } from './errors.ts';
import { toPath, type RedfishResource } from './http.ts';
import { arr, linkOf, num, obj, str, strings, text, type Json } from './json.ts';
import { members, optional } from './links.ts';

export interface VolumeInfo {
  uri: string;
  id: string;
  name: string | null;
  raidType: string | null;
  capacityBytes: number | null;
  /** The Storage resource whose Volumes collection lists it. */
  storageUri: string;
}

export interface CreateVolumeSpec {
  raidType: string;
  name?: string;
  capacityBytes?: number;
  /** Drive `@odata.id`s, as listed by the Storage resource. */
  driveUris?: string[];
  /** Which Storage to create it on; default: the first whose controllers support `raidType`. */
  storageUri?: string;
}

export interface VolumeCollection {
  storageUri: string;
  volumesUri: string;
  raidTypes: string[] | undefined;
}

// BMCs differ in case and trailing slashes for the same resource (iLO), so URIs are compared in this form.
const canonical = (uri: string): string => toPath(uri).replace(/\/+$/, '').toLowerCase();
export const sameUri = (a: string, b: string): boolean => canonical(a) === canonical(b);

export async function collections(ctx: ClientContext): Promise<VolumeCollection[]> {
  const system = (await ctx.discovery.system()).body;
  const storageLink = linkOf(system, 'Storage');
  const found: VolumeCollection[] = [];
  for (const storageUri of storageLink === undefined ? [] : await members(ctx.http, storageLink)) {
    const storage = await optional(() => ctx.http.get(storageUri));
    const volumesUri = storage ? linkOf(storage.body, 'Volumes') : undefined;
    if (!storage || volumesUri === undefined || found.some((c) => sameUri(c.volumesUri, volumesUri))) continue;
    const types = arr(storage.body.StorageControllers).flatMap((c) => strings(obj(c).SupportedRAIDTypes));
    found.push({ storageUri, volumesUri, raidTypes: types.length > 0 ? types : undefined });
  }
  if (found.length === 0) {
    // iLO keeps RAID in the OEM SmartStorage tree; that is a different API, not a missing feature to emulate.
    throw new RedfishError('REDFISH_UNSUPPORTED', 'BMC exposes no Storage Volumes collection');
  }
  return found;
}

function toInfo(volume: RedfishResource, storageUri: string): VolumeInfo {
  return {
    uri: volume.uri,
    id: str(volume.body.Id) ?? volume.uri.split('/').filter(Boolean).pop() ?? volume.uri,
    name: text(volume.body.Name),
    raidType: text(volume.body.RAIDType) ?? text(volume.body.VolumeType),
    capacityBytes: num(volume.body.CapacityBytes) ?? null,
    storageUri,
  };
}

export async function listVolumes(ctx: ClientContext): Promise<VolumeInfo[]> {
  const volumes: VolumeInfo[] = [];
  for (const collection of await collections(ctx)) {
    for (const uri of (await optional(() => members(ctx.http, collection.volumesUri))) ?? []) {
      const volume = await optional(() => ctx.http.get(uri));
      if (volume) volumes.push(toInfo(volume, collection.storageUri));
    }
  }
  return volumes;
}

export async function createVolume(ctx: ClientContext, spec: CreateVolumeSpec): Promise<VolumeInfo> {
  const all = await collections(ctx);
  const target =
    spec.storageUri === undefined
      ? all.find((c) => c.raidTypes === undefined || c.raidTypes.includes(spec.raidType))
      : all.find((c) => sameUri(c.storageUri, spec.storageUri as string));
  if (!target) throw new RedfishError('REDFISH_UNSUPPORTED', `No Storage with a Volumes collection supports ${spec.raidType}`);
  if (target.raidTypes && !target.raidTypes.includes(spec.raidType)) {
    throw new RedfishError('REDFISH_UNSUPPORTED', `${target.storageUri} does not support ${spec.raidType}`);
  }
  const body: Json = { RAIDType: spec.raidType };
  if (spec.name !== undefined) body.Name = spec.name;
  if (spec.capacityBytes !== undefined) body.CapacityBytes = spec.capacityBytes;
  if (spec.driveUris !== undefined) body.Links = { Drives: spec.driveUris.map((uri) => ({ '@odata.id': uri })) };
  const reply = await ctx.http.send('POST', target.volumesUri, body);
  // 202: the controller builds the volume in a task; its monitor, not the Location, is what the reply names.
  if (reply.status === 202) {
    await settled(ctx, reply);
    const built = (await listVolumes(ctx)).find((v) => spec.name !== undefined && v.name === spec.name && sameUri(v.storageUri, target.storageUri));
    if (!built) throw new RedfishError('REDFISH_UNAVAILABLE', 'BMC finished building a volume but does not list it by its name');
    return built;
  }
  const created = reply.location ?? str(reply.body['@odata.id']);
  if (created === undefined) throw new RedfishError('REDFISH_UNAVAILABLE', 'BMC created a volume but did not say where');
  return toInfo(await ctx.http.get(created), target.storageUri);
}

/** Deletes only a volume the BMC itself lists, so a wrong URI can never DELETE some other resource. */
export async function deleteVolume(ctx: ClientContext, volumeUri: string): Promise<void> {
  const volume = (await listVolumes(ctx)).find((v) => sameUri(v.uri, volumeUri));
  if (!volume) throw new RedfishError('REDFISH_NOT_FOUND', `No volume ${toPath(volumeUri)} on this BMC`);
  await settled(ctx, await ctx.http.send('DELETE', volume.uri));
}
