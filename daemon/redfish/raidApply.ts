import type { ClientContext } from './context.ts';
import { RedfishError } from './errors.ts';
import { arr, linkOf, str } from './json.ts';
import { optional } from './links.ts';
import { collections, createVolume, deleteVolume, listVolumes, sameUri, type VolumeCollection, type VolumeInfo } from './volumes.ts';

export interface RaidVolume {
  name: string;
  raidType: string;
  capacityBytes?: number;
  /** Drives by `@odata.id`, by the last segment of it, or by their Id; none: the controller picks. */
  drives?: string[];
  /** The Storage resource by `@odata.id`, last segment or Id; none: the first whose controller supports `raidType`. */
  storage?: string;
}

export interface RaidPlan {
  /** Volumes by name, Id or URI; ones the BMC does not list are already gone. */
  delete: string[];
  create: RaidVolume[];
}

export interface RaidApplyResult {
  deleted: string[];
  created: VolumeInfo[];
  /** Every volume the BMC lists afterwards. */
  volumes: VolumeInfo[];
}

const lastSegment = (uri: string) => decodeURIComponent(uri.replace(/\/+$/, '').split('/').pop() ?? '').toLowerCase();
const names = (ref: string, uri: string, id?: string) => sameUri(ref, uri) || lastSegment(uri) === ref.toLowerCase() || id?.toLowerCase() === ref.toLowerCase();

async function storageFor(ctx: ClientContext, all: VolumeCollection[], ref: string): Promise<VolumeCollection> {
  for (const collection of all) {
    const id = str((await optional(() => ctx.http.get(collection.storageUri)))?.body.Id);
    if (names(ref, collection.storageUri, id)) return collection;
  }
  throw new RedfishError('REDFISH_NOT_FOUND', `No Storage ${ref} with a Volumes collection on this system`);
}

/** Drive references resolved against the drives the Storage itself lists, so a volume is never built on a stranger. */
async function driveUris(ctx: ClientContext, storageUri: string, refs: readonly string[]): Promise<string[]> {
  const listed = arr((await ctx.http.get(storageUri)).body.Drives).map((d) => linkOf(d)).filter((u): u is string => u !== undefined);
  const resolved: string[] = [];
  for (const ref of refs) {
    let match = listed.find((uri) => names(ref, uri));
    for (const uri of match === undefined ? listed : []) {
      if (names(ref, uri, str((await optional(() => ctx.http.get(uri)))?.body.Id))) match = uri;
    }
    if (match === undefined) throw new RedfishError('REDFISH_NOT_FOUND', `Storage ${storageUri} lists no drive ${ref}`);
    resolved.push(match);
  }
  return resolved;
}

/**
 * Deletes the volumes named for deletion, then creates each requested volume unless one of that name exists: applied
 * twice (a retried command), it changes nothing the second time.
 */
export async function applyRaid(ctx: ClientContext, plan: RaidPlan): Promise<RaidApplyResult> {
  // Checked first: a BMC without Storage volumes (iLO's SmartStorage) refuses before anything is done.
  const all = await collections(ctx);
  const deleted: string[] = [];
  for (const ref of plan.delete) {
    const volume = (await listVolumes(ctx)).find((v) => v.name === ref || names(ref, v.uri, v.id));
    if (!volume) continue;
    await deleteVolume(ctx, volume.uri);
    deleted.push(volume.uri);
  }
  const created: VolumeInfo[] = [];
  for (const spec of plan.create) {
    if ((await listVolumes(ctx)).some((v) => v.name === spec.name)) continue;
    const target = spec.storage === undefined ? all.find((c) => !c.raidTypes || c.raidTypes.includes(spec.raidType)) : await storageFor(ctx, all, spec.storage);
    if (!target) throw new RedfishError('REDFISH_UNSUPPORTED', `No Storage with a Volumes collection supports ${spec.raidType}`);
    const drives = spec.drives === undefined ? undefined : await driveUris(ctx, target.storageUri, spec.drives);
    created.push(
      await createVolume(ctx, {
        raidType: spec.raidType,
        name: spec.name,
        storageUri: target.storageUri,
        ...(spec.capacityBytes === undefined ? {} : { capacityBytes: spec.capacityBytes }),
        ...(drives === undefined ? {} : { driveUris: drives }),
      }),
    );
  }
  return { deleted, created, volumes: await listVolumes(ctx) };
}
