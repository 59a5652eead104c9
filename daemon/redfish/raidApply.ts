import type { ClientContext } from './clientContext.ts';
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
  /**
   * The Storage resource by `@odata.id`, last segment or Id; none: the first whose controller supports `raidType` (and,
   * when drives are named, that lists them all).
   */
  storage?: string;
}

export interface RaidPlan {
  /** Volumes by name, Id or URI; ones the BMC does not list are already gone, a reference to several is refused. */
  delete: string[];
  create: RaidVolume[];
}

export interface RaidApplyResult {
  deleted: string[];
  created: VolumeInfo[];
  /** Every volume the BMC lists afterwards (none read for an empty plan). */
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

/**
 * Drive references resolved against the drives the Storage itself lists, so a volume is never built on a stranger;
 * undefined when it does not list them all.
 */
async function driveUris(ctx: ClientContext, storageUri: string, refs: readonly string[]): Promise<string[] | undefined> {
  const listed = arr((await ctx.http.get(storageUri)).body.Drives)
    .map((d) => linkOf(d))
    .filter((u): u is string => u !== undefined);
  const resolved: string[] = [];
  for (const ref of refs) {
    let match = listed.find((uri) => names(ref, uri));
    for (const uri of match === undefined ? listed : []) {
      if (names(ref, uri, str((await optional(() => ctx.http.get(uri)))?.body.Id))) match = uri;
    }
    if (match === undefined) return undefined;
    resolved.push(match);
  }
  return resolved;
}

/** Where a volume goes and on which drives: the named Storage, else the first that supports its type and lists its drives. */
async function placement(ctx: ClientContext, all: VolumeCollection[], spec: RaidVolume): Promise<{ target: VolumeCollection; drives: string[] | undefined }> {
  const candidates =
    spec.storage === undefined ? all.filter((c) => !c.raidTypes || c.raidTypes.includes(spec.raidType)) : [await storageFor(ctx, all, spec.storage)];
  for (const target of candidates) {
    if (spec.drives === undefined) return { target, drives: undefined };
    const drives = await driveUris(ctx, target.storageUri, spec.drives);
    if (drives) return { target, drives };
  }
  if (candidates.length === 0) throw new RedfishError('REDFISH_UNSUPPORTED', `No Storage with a Volumes collection supports ${spec.raidType}`);
  throw new RedfishError('REDFISH_NOT_FOUND', `No ${spec.storage ?? `Storage supporting ${spec.raidType}`} lists the drives ${spec.drives!.join(', ')}`);
}

/**
 * Deletes the volumes named for deletion, then creates each requested volume unless one of that name exists: applied
 * twice (a retried command), it changes nothing the second time.
 */
export async function applyRaid(ctx: ClientContext, plan: RaidPlan): Promise<RaidApplyResult> {
  // Nothing asked: the BMC is not touched, so an optional RAID step passes on machines without Storage volumes.
  if (plan.delete.length === 0 && plan.create.length === 0) return { deleted: [], created: [], volumes: [] };
  // Checked first: a BMC without Storage volumes (iLO's SmartStorage) refuses before anything is done.
  const all = await collections(ctx);
  const deleted: string[] = [];
  for (const ref of plan.delete) {
    const matches = (await listVolumes(ctx)).filter((v) => v.name === ref || names(ref, v.uri, v.id));
    // Names need not be unique on a controller: a reference that fits two volumes deletes neither.
    if (matches.length > 1)
      throw new RedfishError('REDFISH_BAD_REQUEST', `${ref} names ${matches.length} volumes (${matches.map((v) => v.uri).join(', ')}); name one by its URI`);
    const volume = matches[0];
    if (!volume) continue;
    await deleteVolume(ctx, volume.uri);
    deleted.push(volume.uri);
  }
  const created: VolumeInfo[] = [];
  for (const spec of plan.create) {
    if ((await listVolumes(ctx)).some((v) => v.name === spec.name)) continue;
    const { target, drives } = await placement(ctx, all, spec);
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
