import { RedfishError } from './errors.ts';
import type { RedfishHttp, RedfishResource } from './http.ts';
import { arr, isObject, linkOf, obj, str, strings, type Json } from './json.ts';

export interface ActionRef {
  name: string;
  target: string;
  /** The action object itself, holding inline `<Param>@Redfish.AllowableValues` and `@Redfish.ActionInfo`. */
  annotations: Json;
}

function toRef(name: string, action: unknown): ActionRef | undefined {
  const target = isObject(action) ? str(action.target) : undefined;
  return target === undefined || !isObject(action) ? undefined : { name, target, annotations: action };
}

/** A standard action, e.g. `#ComputerSystem.Reset`. The target is always taken from the resource. */
export function findAction(resource: Json, name: string): ActionRef | undefined {
  return toRef(name, obj(resource.Actions)[name]);
}

/**
 * A vendor action whose name ends with `suffix`, wherever the vendor put it: directly in `Actions.Oem` (AMI's
 * `#VirtualMedia.EnableRMedia`), in `Actions.Oem.<Vendor>`, or in `Oem.<Vendor>.Actions` (iLO's place).
 */
export function findOemAction(resource: Json, suffix: string): ActionRef | undefined {
  const oemActions = obj(obj(resource.Actions).Oem);
  const groups = [oemActions, ...Object.values(oemActions), ...Object.values(obj(resource.Oem)).map((vendor) => obj(obj(vendor).Actions))];
  for (const group of groups) {
    for (const [name, action] of Object.entries(obj(group))) {
      const ref = name.endsWith(suffix) ? toRef(name, action) : undefined;
      if (ref) return ref;
    }
  }
  return undefined;
}

/**
 * Allowable values for an action parameter: inline annotation, else the ActionInfo resource. `undefined` means
 * the BMC does not say, and callers then fall back to the standard value set.
 */
export async function allowableValues(http: RedfishHttp, action: ActionRef, parameter: string): Promise<string[] | undefined> {
  const inline = action.annotations[`${parameter}@Redfish.AllowableValues`];
  if (Array.isArray(inline)) return strings(inline);
  const infoUri = str(action.annotations['@Redfish.ActionInfo']);
  if (infoUri === undefined) return undefined;
  const info = await http.get(infoUri);
  const param = arr(info.body.Parameters).find((p) => obj(p).Name === parameter);
  const values = obj(param).AllowableValues;
  return Array.isArray(values) ? strings(values) : undefined;
}

/** Member URIs of a collection, following `Members@odata.nextLink` pages. */
export async function members(http: RedfishHttp, collectionUri: string): Promise<string[]> {
  const uris: string[] = [];
  const seen = new Set<string>();
  let next: string | undefined = collectionUri;
  while (next !== undefined && !seen.has(next)) {
    seen.add(next);
    const page = await http.get(next);
    for (const member of arr(page.body.Members)) {
      const uri = linkOf(member);
      if (uri !== undefined) uris.push(uri);
    }
    next = str(page.body['Members@odata.nextLink']);
  }
  return uris;
}

/** Display id: the resource's Id, else the last segment of its URI (DMTF drives carry no Id). */
export function idOf(resource: RedfishResource): string {
  return str(resource.body.Id) ?? decodeURIComponent(resource.uri.replace(/\/+$/, '').split('/').pop() ?? resource.uri);
}

export function requireLink(resource: Json, what: string, ...path: string[]): string {
  const uri = linkOf(resource, ...path);
  if (uri === undefined) throw new RedfishError('REDFISH_UNSUPPORTED', `BMC does not expose ${what}`);
  return uri;
}

/** Runs a read, turning "this BMC has no such resource" into `undefined` for inventory-style tolerant reads. */
export async function optional<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof RedfishError && (error.code === 'REDFISH_NOT_FOUND' || error.code === 'REDFISH_UNSUPPORTED')) return undefined;
    throw error;
  }
}
