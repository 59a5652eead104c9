/**
 * "Acme Cloud": an in-memory emulator of a VPS cloud's HTTP API, served on 127.0.0.1 over real HTTP, standing in
 * for the cloud a third party would write a provider plugin for. It keeps its own records so a test can check what
 * the provider really did (how many servers one client token created), and it can fail requests on demand.
 *
 * State moves with time, evaluated when a request reads it (no timers to leak): provisioning → running after
 * `bootMs`; stop: stopping → stopped after `stopMs`; start: starting → running after `bootMs`; delete: deleting →
 * gone after `deleteMs`.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Acme's own server statuses, spelled as its API spells them. */
export type AcmeServerStatus = 'provisioning' | 'running' | 'stopping' | 'stopped' | 'starting' | 'deleting';

/** The emulator's own view of one server ever created, deleted ones included. */
export interface AcmeServerRecord {
  id: string;
  clientToken: string;
  name: string;
  offer: string;
  image: string;
  region: string;
  status: AcmeServerStatus;
  power: 'on' | 'off';
  userData: string | null;
  sshKeys: string[];
  /** How many servers were created (201) for this client token, this one included. */
  createdForToken: number;
  deleted: boolean;
}

/** How the emulated account behaves; the times are short so a test sees every transition. */
export interface AcmeCloudOptions {
  /** The one account token the API accepts (see `issueAccountToken`). */
  token: string;
  /** Default 40 ms. */
  bootMs?: number;
  /** Default 20 ms. */
  stopMs?: number;
  /** Default 20 ms. */
  deleteMs?: number;
  /** Default page size of `GET /v1/servers`. Default 5. */
  pageSize?: number;
  /** Default `['fra1']`. */
  regions?: string[];
}

/** A fresh account API token, the way Acme's console would issue one. */
export function issueAccountToken(): string {
  return `acme_${randomBytes(24).toString('base64url')}`;
}

const offers = [
  { id: 'a1.small', vcpus: 1, memory_mb: 1024, disk_gb: 25 },
  { id: 'a1.medium', vcpus: 2, memory_mb: 4096, disk_gb: 80 },
  { id: 'a1.large', vcpus: 8, memory_mb: 16384, disk_gb: 320 },
];

interface Pending {
  to: AcmeServerStatus | 'gone';
  at: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

/** One emulated Acme account on its own port; `close()` (or `await using`) stops it. */
export class AcmeCloud {
  private readonly servers: AcmeServerRecord[] = [];
  /** Indexes of `servers`, as a cloud's database has: a lookup by id or client token costs the same at 10 or 10,000 servers. */
  private readonly byId = new Map<string, AcmeServerRecord>();
  private readonly byToken = new Map<string, AcmeServerRecord[]>();
  private readonly pending = new Map<string, Pending>();
  private readonly createdPerToken = new Map<string, number>();
  private faults: { remaining: number; status: number } = { remaining: 0, status: 503 };
  /** Requests answered, by method and route (`GET /v1/servers/:id`): what a client's polling costs the cloud. */
  readonly requestCounts = new Map<string, number>();
  private boundPort = 0;

  private constructor(
    private readonly server: Server,
    private readonly options: Required<AcmeCloudOptions>,
  ) {}

  /** Starts the emulator on an ephemeral port of 127.0.0.1. */
  static async start(options: AcmeCloudOptions): Promise<AcmeCloud> {
    const settled: Required<AcmeCloudOptions> = { bootMs: 40, stopMs: 20, deleteMs: 20, pageSize: 5, regions: ['fra1'], ...options };
    // Requests arrive only once the server listens, after `cloud` is made.
    const server = createServer((req, res) => void cloud.handle(req, res));
    const cloud = new AcmeCloud(server, settled);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cloud.boundPort = (server.address() as AddressInfo).port;
    return cloud;
  }

  /** The port it listens (or, once closed, listened) on. */
  get port(): number {
    return this.boundPort;
  }

  /** The API's base URL, e.g. `http://127.0.0.1:41234`. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every server ever created, with its settled state now. */
  records(): AcmeServerRecord[] {
    return this.servers.map((server) => {
      this.settle(server);
      return { ...server, sshKeys: [...server.sshKeys], createdForToken: this.createdPerToken.get(server.clientToken) ?? 0 };
    });
  }

  /** The next `n` requests, whatever they are, answer `status` (with `Retry-After: 0` for 429/503). */
  failNext(n: number, status = 503): void {
    this.faults = { remaining: n, status };
  }

  /** Stops listening and drops open keep-alive connections. */
  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.close((error) => (error ? reject(error) : resolve()));
      this.server.closeAllConnections();
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const answer = this.route(req, Buffer.concat(chunks).toString('utf8'));
      send(res, answer.status, answer.body);
    } catch (error) {
      const failure = error instanceof HttpError ? error : new HttpError(500, 'internal', 'internal error');
      const headers: Record<string, string> = failure.status === 429 || failure.status === 503 ? { 'retry-after': '0' } : {};
      send(res, failure.status, { error: { code: failure.errorCode, message: failure.message } }, headers);
    }
  }

  private route(req: IncomingMessage, bodyText: string): { status: number; body: unknown } {
    const route = `${req.method} ${(req.url ?? '/').split('?')[0]!.replace(/^(\/v1\/servers\/)[^/]+/, '$1:id')}`;
    this.requestCounts.set(route, (this.requestCounts.get(route) ?? 0) + 1);
    if (this.faults.remaining > 0) {
      this.faults.remaining--;
      throw new HttpError(this.faults.status, 'unavailable', 'injected failure');
    }
    if (req.headers.authorization !== `Bearer ${this.options.token}`) {
      throw new HttpError(401, 'unauthorized', 'missing or invalid API token');
    }
    const url = new URL(req.url ?? '/', 'http://acme.invalid');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (method === 'GET' && path === '/v1/offers') return { status: 200, body: { offers } };
    if (method === 'GET' && path === '/v1/servers') return { status: 200, body: this.list(url.searchParams) };
    if (method === 'POST' && path === '/v1/servers') return this.create(parseJson(bodyText));
    const serverPath = /^\/v1\/servers\/([^/]+)(?:\/actions\/(start|stop))?$/.exec(path);
    const server = serverPath ? this.live(decodeURIComponent(serverPath[1] ?? '')) : undefined;
    if (!serverPath) throw new HttpError(404, 'not_found', `no route ${method} ${path}`);
    if (!server) throw new HttpError(404, 'not_found', 'no such server');
    const action = serverPath[2];
    if (method === 'GET' && !action) return { status: 200, body: { server: wire(server) } };
    if (method === 'DELETE' && !action) {
      if (server.status !== 'deleting') this.move(server, 'deleting', { to: 'gone', at: Date.now() + this.options.deleteMs });
      return { status: 202, body: { server: wire(server) } };
    }
    if (method === 'POST' && action) return { status: 202, body: { server: wire(this.power(server, action)) } };
    throw new HttpError(405, 'method_not_allowed', `${method} not allowed here`);
  }

  private create(body: Record<string, unknown>): { status: number; body: unknown } {
    const { name, offer, image, region, ssh_keys: sshKeys, user_data: userData, client_token: clientToken } = body;
    if (typeof clientToken !== 'string' || clientToken === '') throw new HttpError(422, 'invalid_request', 'client_token is required');
    const existing = this.ofToken(clientToken).find((s) => this.live(s.id));
    if (existing) return { status: 200, body: { server: wire(existing) } };
    if (typeof name !== 'string' || typeof image !== 'string') throw new HttpError(422, 'invalid_request', 'name and image are required');
    if (!offers.some((o) => o.id === offer)) throw new HttpError(422, 'unknown_offer', 'no such offer');
    if (typeof region !== 'string' || !this.options.regions.includes(region)) throw new HttpError(422, 'unknown_region', 'no such region');
    if (!Array.isArray(sshKeys) || !sshKeys.every((k) => typeof k === 'string')) throw new HttpError(422, 'invalid_request', 'ssh_keys must be strings');
    const created = (this.createdPerToken.get(clientToken) ?? 0) + 1;
    this.createdPerToken.set(clientToken, created);
    const server: AcmeServerRecord = {
      id: `srv-${String(this.servers.length + 1).padStart(6, '0')}`,
      clientToken,
      name,
      offer: offer as string,
      image,
      region,
      status: 'provisioning',
      power: 'off',
      userData: typeof userData === 'string' ? userData : null,
      sshKeys: sshKeys,
      createdForToken: created,
      deleted: false,
    };
    this.servers.push(server);
    this.byId.set(server.id, server);
    this.byToken.set(clientToken, [...this.ofToken(clientToken), server]);
    this.pending.set(server.id, { to: 'running', at: Date.now() + this.options.bootMs });
    return { status: 201, body: { server: wire(server) } };
  }

  private list(query: URLSearchParams): unknown {
    const clientToken = query.get('client_token');
    if (clientToken !== null)
      return {
        servers: this.ofToken(clientToken)
          .filter((s) => this.live(s.id))
          .map(wire),
        next_page_token: null,
      };
    const live = this.servers.filter((s) => this.live(s.id));
    const pageSize = Math.min(Number(query.get('page_size') ?? this.options.pageSize) || this.options.pageSize, 100);
    // The page token is the last id of the previous page: ids grow, so a deletion between pages skips nothing.
    const after = query.get('page_token') ?? '';
    const rest = live.filter((s) => s.id > after);
    const page = rest.slice(0, pageSize);
    const last = page.at(-1);
    return { servers: page.map(wire), next_page_token: rest.length > pageSize && last ? last.id : null };
  }

  private power(server: AcmeServerRecord, action: string): AcmeServerRecord {
    if (server.status === 'provisioning' || server.status === 'deleting') {
      throw new HttpError(409, 'invalid_state', `cannot ${action} a server that is ${server.status}`);
    }
    const on = server.status === 'running' || server.status === 'starting';
    if (action === 'stop' && on) this.move(server, 'stopping', { to: 'stopped', at: Date.now() + this.options.stopMs });
    if (action === 'start' && !on) this.move(server, 'starting', { to: 'running', at: Date.now() + this.options.bootMs });
    return server;
  }

  private move(server: AcmeServerRecord, status: AcmeServerStatus, next: Pending): void {
    server.status = status;
    this.pending.set(server.id, next);
  }

  /** Applies a due transition; returns the server unless it is gone. */
  private live(id: string): AcmeServerRecord | undefined {
    const server = this.byId.get(id);
    if (!server) return undefined;
    this.settle(server);
    return server.deleted ? undefined : server;
  }

  private ofToken(clientToken: string): readonly AcmeServerRecord[] {
    return this.byToken.get(clientToken) ?? [];
  }

  private settle(server: AcmeServerRecord): void {
    const next = this.pending.get(server.id);
    if (!next || Date.now() < next.at) return;
    this.pending.delete(server.id);
    if (next.to === 'gone') server.deleted = true;
    else server.status = next.to;
    server.power = server.status === 'running' || server.status === 'stopping' ? 'on' : 'off';
  }
}

function wire(server: AcmeServerRecord): Record<string, unknown> {
  const on = server.status === 'running' || server.status === 'stopping';
  return {
    id: server.id,
    name: server.name,
    client_token: server.clientToken,
    offer: server.offer,
    image: server.image,
    region: server.region,
    status: server.status,
    power: on ? 'on' : 'off',
    ipv4: server.status === 'provisioning' ? [] : [`203.0.113.${Number(server.id.slice(4)) % 250}`],
  };
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through to the same answer as a non-object body
  }
  throw new HttpError(400, 'malformed_json', 'body must be a JSON object');
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
