/**
 * "Hetzner Cloud": an in-memory emulator of the parts of Hetzner Cloud's public API a VPS provider uses, served on
 * 127.0.0.1 over real HTTP. Every behaviour follows the API reference (docs.hetzner.cloud/reference/cloud) or what
 * the official client libraries (hcloud-go, hcloud-python) rely on; README.md in this folder says which, section by
 * section. It keeps its own records so a test can check what a provider really did, and fails requests on demand.
 *
 * State moves with time, evaluated when a request reads it (no timers to leak): a create is `initializing` then
 * `starting` then `running` (its `create_server` action succeeds then); poweroff and shutdown: `stopping` → `off`;
 * poweron: `starting` → `running`; delete: `deleting` → gone (404).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseLabelSelector } from './labelSelector.ts';
import { RateLimitBucket } from './rateLimit.ts';
import { actionWire, paginate, parseJsonObject, readCreateRequest, serverTypes, serverWire, statusOfCode } from './wire.ts';
import type { HetznerActionRecord, HetznerErrorCode, HetznerServerRecord, HetznerServerStatus } from './wire.ts';

export type { HetznerServerRecord } from './wire.ts';

export interface HetznerCloudOptions {
  /** The one project API token the API accepts (see `issueProjectToken`). */
  token: string;
  /** Default 40 ms (half `initializing`, half `starting`). */
  bootMs?: number;
  /** Default 20 ms. */
  stopMs?: number;
  /** Default 20 ms. */
  deleteMs?: number;
  /** `per_page` when a request gives none: the reference says 25; tests use less to see pagination. */
  perPage?: number;
  /** Servers the project may hold before `resource_limit_exceeded`. Default 25. */
  serverLimit?: number;
  /** The rate limit bucket: the reference documents 3600 requests, refilled one per second. */
  rateLimit?: { limit: number; refillMs: number };
}

/** A fresh project API token: Hetzner's are 64 alphanumeric characters. */
export function issueProjectToken(): string {
  return randomBytes(48)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, 'x')
    .slice(0, 64);
}

class ApiError extends Error {
  constructor(
    readonly code: HetznerErrorCode,
    message: string,
    readonly details: unknown = undefined,
  ) {
    super(message);
  }
}

interface Step {
  to: HetznerServerStatus | 'gone';
  /** Ms after the action starts; 0 applies at once. */
  at: number;
}

const steps = (...pairs: [HetznerServerStatus | 'gone', number][]): Step[] => pairs.map(([to, at]) => ({ to, at }));

/** One emulated Hetzner Cloud project on its own port; `close()` (or `await using`) stops it. */
export class HetznerCloud {
  private readonly servers: HetznerServerRecord[] = [];
  private readonly byId = new Map<number, HetznerServerRecord>();
  private readonly steps = new Map<number, { queue: Step[]; action: HetznerActionRecord }>();
  private readonly actions: HetznerActionRecord[] = [];
  private readonly createdPerToken = new Map<string, number>();
  private readonly createdAt = new Map<number, string>();
  private faults: { remaining: number; code: HetznerErrorCode } = { remaining: 0, code: 'unavailable' };
  private readonly bucket: RateLimitBucket;
  /** Requests answered, by method and route (`GET /v1/servers/:id`). */
  readonly requestCounts = new Map<string, number>();
  private boundPort = 0;

  private constructor(
    private readonly server: Server,
    private readonly options: Required<HetznerCloudOptions>,
  ) {
    this.bucket = new RateLimitBucket(options.rateLimit);
  }

  static async start(options: HetznerCloudOptions): Promise<HetznerCloud> {
    const settled: Required<HetznerCloudOptions> = {
      bootMs: 40,
      stopMs: 20,
      deleteMs: 20,
      perPage: 25,
      serverLimit: 25,
      rateLimit: { limit: 3600, refillMs: 1000 },
      ...options,
    };
    const server = createServer((req, res) => void cloud.handle(req, res));
    const cloud = new HetznerCloud(server, settled);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cloud.boundPort = (server.address() as AddressInfo).port;
    return cloud;
  }

  get port(): number {
    return this.boundPort;
  }

  /** The API's base URL with its version, as `https://api.hetzner.cloud/v1` is. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Every server ever created, with its settled state now. */
  records(): HetznerServerRecord[] {
    return this.servers.map((server) => {
      this.settle(server);
      const token = server.labels['bc-client-token'];
      return { ...server, labels: { ...server.labels }, createdForToken: token === undefined ? 1 : (this.createdPerToken.get(token) ?? 0) };
    });
  }

  /** The next `n` requests answer the documented error `code` (a 429 with the rate limit headers of an empty bucket). */
  failNext(n: number, code: HetznerErrorCode = 'unavailable'): void {
    this.faults = { remaining: n, code };
  }

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
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let status: number;
    let body: unknown;
    try {
      ({ status, body } = this.route(req, Buffer.concat(chunks).toString('utf8')));
    } catch (error) {
      const failure = error instanceof ApiError ? error : new ApiError('server_error', 'internal server error');
      status = statusOfCode[failure.code];
      body = { error: { code: failure.code, message: failure.message, details: failure.details ?? null } };
    }
    res.writeHead(status, { 'content-type': 'application/json', ...this.bucket.headers() });
    res.end(status === 204 ? undefined : JSON.stringify(body));
  }

  private route(req: IncomingMessage, bodyText: string): { status: number; body: unknown } {
    const url = new URL(req.url ?? '/', 'http://hetzner.invalid');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const route = `${method} ${path.replace(/^(\/v1\/(servers|actions)\/)\d+/, '$1:id')}`;
    this.requestCounts.set(route, (this.requestCounts.get(route) ?? 0) + 1);
    if (this.faults.remaining > 0) {
      this.faults.remaining--;
      if (this.faults.code === 'rate_limit_exceeded') this.bucket.drain();
      throw new ApiError(this.faults.code, 'injected failure');
    }
    if (req.headers.authorization !== `Bearer ${this.options.token}`) throw new ApiError('unauthorized', 'unable to authenticate');
    if (!this.bucket.take()) throw new ApiError('rate_limit_exceeded', 'limit of requests per hour reached');
    if (method === 'GET' && path === '/v1/server_types')
      return { status: 200, body: paginate('server_types', serverTypes, url.searchParams, this.options.perPage) };
    if (method === 'GET' && path === '/v1/servers') return { status: 200, body: this.list(url.searchParams) };
    if (method === 'POST' && path === '/v1/servers') return this.create(bodyText);
    const action = /^\/v1\/actions\/(\d+)$/.exec(path);
    if (method === 'GET' && action) return { status: 200, body: { action: actionWire(this.actionOf(Number(action[1]))) } };
    const match = /^\/v1\/servers\/(\d+)(?:\/actions\/(poweron|poweroff|shutdown))?$/.exec(path);
    if (!match) throw new ApiError('not_found', `no route ${method} ${path}`);
    const server = this.live(Number(match[1]));
    if (!server) throw new ApiError('not_found', `server with ID '${match[1]}' not found`);
    const verb = match[2];
    if (method === 'GET' && !verb) return { status: 200, body: { server: this.wire(server) } };
    if (method === 'DELETE' && !verb) {
      const deletion = this.begin(server, 'delete_server', steps(['deleting', 0], ['gone', this.options.deleteMs]));
      return { status: 200, body: { action: actionWire(deletion) } };
    }
    if (method === 'POST' && verb) return { status: 201, body: { action: actionWire(this.power(server, verb)) } };
    throw new ApiError('not_found', `no route ${method} ${path}`);
  }

  private create(bodyText: string): { status: number; body: unknown } {
    const body = parseJsonObject(bodyText);
    if (body === undefined) throw new ApiError('json_error', 'request body is not a JSON object');
    const request = readCreateRequest(body);
    if (!request.ok)
      throw new ApiError('invalid_input', `invalid input in field '${request.field}'`, { fields: [{ name: request.field, messages: [request.message] }] });
    const { name, serverType, image, location, labels, userData, start } = request;
    const live = this.servers.filter((s) => this.live(s.id));
    if (live.some((s) => s.name === name)) throw new ApiError('uniqueness_error', 'server name is already used', { fields: [{ name: 'name' }] });
    if (live.length >= this.options.serverLimit) throw new ApiError('resource_limit_exceeded', 'server limit exceeded');
    const record: HetznerServerRecord = {
      id: 4_200_000 + this.servers.length + 1,
      name,
      serverType,
      image,
      location,
      labels,
      userData,
      status: 'initializing',
      createdForToken: 0,
      deleted: false,
    };
    const token = record.labels['bc-client-token'];
    if (token !== undefined) this.createdPerToken.set(token, (this.createdPerToken.get(token) ?? 0) + 1);
    this.servers.push(record);
    this.byId.set(record.id, record);
    this.createdAt.set(record.id, new Date().toISOString());
    const { bootMs } = this.options;
    const queue = start ? steps(['initializing', 0], ['starting', bootMs / 2], ['running', bootMs]) : steps(['initializing', 0], ['off', bootMs / 2]);
    const action = this.begin(record, 'create_server', queue);
    return { status: 201, body: { server: this.wire(record), action: actionWire(action), next_actions: [], root_password: null } };
  }

  private list(query: URLSearchParams): unknown {
    const selector = query.get('label_selector');
    let matches: (labels: Record<string, string>) => boolean = () => true;
    if (selector !== null) {
      try {
        matches = parseLabelSelector(selector);
      } catch (error) {
        throw new ApiError('invalid_input', (error as Error).message);
      }
    }
    const name = query.get('name');
    const live = this.servers.filter((s) => this.live(s.id) && matches(s.labels) && (name === null || s.name === name));
    return paginate(
      'servers',
      live.map((s) => this.wire(s)),
      query,
      this.options.perPage,
    );
  }

  private power(server: HetznerServerRecord, verb: string): HetznerActionRecord {
    const on = server.status === 'running';
    const { bootMs, stopMs } = this.options;
    if (verb === 'poweron') return this.begin(server, 'start_server', on ? [] : steps(['starting', 0], ['running', bootMs]));
    return this.begin(server, verb === 'poweroff' ? 'stop_server' : 'shutdown_server', on ? steps(['stopping', 0], ['off', stopMs]) : []);
  }

  /** Starts an action on the server: `locked` while another is running, as the reference's error table says. */
  private begin(server: HetznerServerRecord, command: string, queue: Step[]): HetznerActionRecord {
    if (this.steps.has(server.id)) throw new ApiError('locked', `server ${server.id} is locked by a running action`);
    const now = Date.now();
    const action: HetznerActionRecord = {
      id: 9_000_000 + this.actions.length + 1,
      command,
      status: queue.length === 0 ? 'success' : 'running',
      progress: queue.length === 0 ? 100 : 0,
      started: new Date(now).toISOString(),
      finished: queue.length === 0 ? new Date(now).toISOString() : null,
      resources: [{ id: server.id, type: 'server' }],
      error: null,
    };
    this.actions.push(action);
    const [first, ...rest] = queue;
    if (first?.at === 0 && first.to !== 'gone') server.status = first.to;
    const pending = (first?.at === 0 ? rest : queue).map((step) => ({ ...step, at: now + step.at }));
    if (pending.length > 0) this.steps.set(server.id, { queue: pending, action });
    return action;
  }

  private actionOf(id: number): HetznerActionRecord {
    for (const server of this.servers) this.settle(server);
    const action = this.actions.find((a) => a.id === id);
    if (!action) throw new ApiError('not_found', `action with ID '${id}' not found`);
    return action;
  }

  private wire(server: HetznerServerRecord): Record<string, unknown> {
    return serverWire(server, this.createdAt.get(server.id) ?? '');
  }

  private live(id: number): HetznerServerRecord | undefined {
    const server = this.byId.get(id);
    if (!server) return undefined;
    this.settle(server);
    return server.deleted ? undefined : server;
  }

  private settle(server: HetznerServerRecord): void {
    const pending = this.steps.get(server.id);
    if (!pending) return;
    while (pending.queue[0] && Date.now() >= pending.queue[0].at) {
      const step = pending.queue.shift()!;
      if (step.to === 'gone') server.deleted = true;
      else server.status = step.to;
    }
    if (pending.queue.length > 0) return;
    this.steps.delete(server.id);
    Object.assign(pending.action, { status: 'success', progress: 100, finished: new Date().toISOString() });
  }
}
