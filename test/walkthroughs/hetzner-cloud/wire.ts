/**
 * The emulator's fixed catalogue and its JSON answers, spelled as Hetzner Cloud's API reference shows them
 * (docs.hetzner.cloud/reference/cloud: Servers, Server Types, Actions, Errors, Pagination). Only the fields a client
 * library reads are kept; values are examples, not Hetzner's prices or capacity.
 */

/** Server statuses, as the reference lists them for `server.status`. */
export type HetznerServerStatus = 'initializing' | 'starting' | 'running' | 'stopping' | 'off' | 'deleting' | 'rebuilding' | 'migrating' | 'unknown';

/** The emulator's own view of one server ever created, deleted ones included. */
export interface HetznerServerRecord {
  id: number;
  name: string;
  serverType: string;
  image: string;
  location: string;
  labels: Record<string, string>;
  userData: string | null;
  status: HetznerServerStatus;
  /** How many servers were created (201) with this server's `bc-client-token` label, this one included. */
  createdForToken: number;
  deleted: boolean;
}

/** An action as `GET /v1/actions/{id}` shows it; `status` is `running` until the server settles. */
export interface HetznerActionRecord {
  id: number;
  command: string;
  status: 'running' | 'success' | 'error';
  progress: number;
  started: string;
  finished: string | null;
  resources: { id: number; type: 'server' }[];
  error: { code: string; message: string } | null;
}

export const serverTypes = [
  { id: 1, name: 'cx11', description: 'CX11', cores: 1, memory: 2, disk: 20, deprecated: true, cpu_type: 'shared', architecture: 'x86' },
  { id: 22, name: 'cx22', description: 'CX22', cores: 2, memory: 4, disk: 40, deprecated: false, cpu_type: 'shared', architecture: 'x86' },
  { id: 23, name: 'cx32', description: 'CX32', cores: 4, memory: 8, disk: 80, deprecated: false, cpu_type: 'shared', architecture: 'x86' },
  { id: 24, name: 'cx42', description: 'CX42', cores: 8, memory: 16, disk: 160, deprecated: false, cpu_type: 'shared', architecture: 'x86' },
];

/** Locations and the datacenter each server lands in. */
export const datacenters: Record<string, string> = { fsn1: 'fsn1-dc14', nbg1: 'nbg1-dc3', hel1: 'hel1-dc2', ash: 'ash-dc1', hil: 'hil-dc1', sin: 'sin-dc1' };
export const images = new Set(['debian-12', 'ubuntu-24.04', 'rocky-9']);

/** The documented HTTP status of each error code the emulator answers with. */
export const statusOfCode = {
  unauthorized: 401,
  forbidden: 403,
  invalid_input: 400,
  json_error: 400,
  locked: 423,
  not_found: 404,
  rate_limit_exceeded: 429,
  resource_limit_exceeded: 403,
  uniqueness_error: 409,
  conflict: 409,
  server_error: 500,
  unavailable: 503,
} as const;
export type HetznerErrorCode = keyof typeof statusOfCode;

export function serverWire(server: HetznerServerRecord, created: string): Record<string, unknown> {
  const type = serverTypes.find((t) => t.name === server.serverType);
  return {
    id: server.id,
    name: server.name,
    status: server.status,
    created,
    public_net: {
      ipv4: { id: server.id + 1000, ip: `203.0.113.${server.id % 250}`, blocked: false, dns_ptr: `static.${server.id}.example.invalid` },
      ipv6: { id: server.id + 2000, ip: `2001:db8:${server.id.toString(16)}::/64`, blocked: false, dns_ptr: [] },
      floating_ips: [],
      firewalls: [],
    },
    private_net: [],
    server_type: type,
    datacenter: { name: datacenters[server.location], location: { name: server.location } },
    image: { name: server.image, type: 'system', os_flavor: server.image.split('-')[0] },
    labels: { ...server.labels },
    locked: false,
    protection: { delete: false, rebuild: false },
  };
}

export function actionWire(action: HetznerActionRecord): Record<string, unknown> {
  return { ...action, resources: action.resources.map((r) => ({ ...r })) };
}

/** The reference's pagination: `page` from 1, `per_page` at most 50, and `meta.pagination` to follow. */
export function paginate<T>(key: string, items: readonly T[], query: URLSearchParams, defaultPerPage: number): Record<string, unknown> {
  const perPage = Math.min(Number(query.get('per_page') ?? defaultPerPage) || defaultPerPage, 50);
  const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  const pagination = {
    page,
    per_page: perPage,
    previous_page: page > 1 ? page - 1 : null,
    next_page: page < lastPage ? page + 1 : null,
    last_page: lastPage,
    total_entries: items.length,
  };
  return { [key]: items.slice((page - 1) * perPage, page * perPage), meta: { pagination } };
}

/** The fields of `POST /v1/servers` the emulator acts on, checked as the reference lists them; or the failing field. */
export function readCreateRequest(
  body: Record<string, unknown>,
):
  | { ok: true; name: string; serverType: string; image: string; location: string; labels: Record<string, string>; userData: string | null; start: boolean }
  | { ok: false; field: string; message: string } {
  const { name, server_type: serverType, image, location, labels = {}, user_data: userData = null, start_after_create: start = true } = body;
  if (typeof name !== 'string' || !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(name)) return { ok: false, field: 'name', message: 'must be a valid hostname' };
  if (typeof serverType !== 'string' || !serverTypes.some((t) => t.name === serverType))
    return { ok: false, field: 'server_type', message: 'server type not found' };
  if (typeof image !== 'string' || !images.has(image)) return { ok: false, field: 'image', message: 'image not found' };
  if (typeof location !== 'string' || !(location in datacenters)) return { ok: false, field: 'location', message: 'location not found' };
  if (typeof labels !== 'object' || labels === null || !Object.values(labels).every((v) => typeof v === 'string'))
    return { ok: false, field: 'labels', message: 'values must be strings' };
  if (userData !== null && (typeof userData !== 'string' || userData.length > 32 * 1024)) return { ok: false, field: 'user_data', message: 'at most 32 KiB' };
  return {
    ok: true,
    name,
    serverType,
    image,
    location,
    labels: { ...(labels as Record<string, string>) },
    userData: userData,
    start: start !== false,
  };
}

/** The request body as a JSON object, or undefined (`json_error`). */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // the same answer as a body that is JSON but not an object
  }
  return undefined;
}
