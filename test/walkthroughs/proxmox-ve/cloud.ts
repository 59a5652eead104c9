/**
 * "Proxmox VE": an in-memory emulator of the parts of the Proxmox VE API (`/api2/json`) a VPS provider uses, served
 * on 127.0.0.1 over real HTTP. Behaviours follow the API viewer (pve.proxmox.com/pve-docs/api-viewer/) and the admin
 * guide; README.md in this folder names the source of each, and what the documents leave open. Two nodes, `pve1` and
 * `pve2`; templates `debian-12` (9000) and `ubuntu-24.04` (9001) on `pve1`.
 *
 * Tasks move with time, evaluated when a request reads the VM (no timers to leak): a clone holds the new VM's
 * `clone` lock for `cloneMs`; start: `running` at once; stop: `stopped` after `stopMs`; destroy: gone after
 * `deleteMs`, and a second destroy meanwhile cannot take the VM's file lock.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PveVmRecord {
  vmid: number;
  node: string;
  name: string;
  template: boolean;
  status: 'running' | 'stopped';
  lock: string | undefined;
  config: Record<string, string>;
  diskGib: number;
  deleted: boolean;
}

export interface ProxmoxVeOptions {
  /** The one API token the API accepts, `USER@REALM!TOKENID=SECRET` (see `issueApiToken`). */
  token: string;
  /** Defaults 40, 20, 20 ms. */
  cloneMs?: number;
  stopMs?: number;
  deleteMs?: number;
}

/** A fresh API token as `pveum user token add` prints it: the token id and a UUID secret. */
export function issueApiToken(): string {
  const hex = randomBytes(16).toString('hex');
  return `bc@pve!provider=${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A refusal: Proxmox VE puts the message in the status line and answers `{ "data": null }`. */
class PveError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Record<string, string>,
  ) {
    super(message);
  }
}

export class ProxmoxVe {
  private readonly vms = new Map<number, PveVmRecord>();
  private readonly pending = new Map<number, { at: number; apply: () => void }>();
  private faults = { remaining: 0, status: 503 };
  readonly requestCounts = new Map<string, number>();
  private boundPort = 0;

  private constructor(
    private readonly server: Server,
    private readonly options: Required<ProxmoxVeOptions>,
  ) {
    for (const [vmid, name] of [
      [9000, 'debian-12'],
      [9001, 'ubuntu-24.04'],
    ] as const)
      this.vms.set(vmid, { vmid, node: 'pve1', name, template: true, status: 'stopped', lock: undefined, config: {}, diskGib: 3, deleted: false });
  }

  static async start(options: ProxmoxVeOptions): Promise<ProxmoxVe> {
    const settled: Required<ProxmoxVeOptions> = { cloneMs: 40, stopMs: 20, deleteMs: 20, ...options };
    const server = createServer((req, res) => void pve.handle(req, res));
    const pve = new ProxmoxVe(server, settled);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    pve.boundPort = (server.address() as AddressInfo).port;
    return pve;
  }

  get port(): number {
    return this.boundPort;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}/api2/json`;
  }

  /** Every VM ever cloned (templates left out), with its settled state now. */
  records(): PveVmRecord[] {
    return [...this.vms.values()].filter((vm) => !vm.template).map((vm) => (this.settle(vm), { ...vm, config: { ...vm.config } }));
  }

  /** The next `n` requests answer `status` (503: pveproxy unavailable). */
  failNext(n: number, status = 503): void {
    this.faults = { remaining: n, status };
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
    try {
      const data = this.route(req, new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json;charset=UTF-8' });
      res.end(JSON.stringify({ data }));
    } catch (error) {
      const failure = error instanceof PveError ? error : new PveError(500, 'internal error');
      res.writeHead(failure.status, failure.message, { 'content-type': 'application/json;charset=UTF-8' });
      res.end(JSON.stringify(failure.errors ? { data: null, errors: failure.errors } : { data: null }));
    }
  }

  private route(req: IncomingMessage, form: URLSearchParams): unknown {
    const url = new URL(req.url ?? '/', 'http://pve.invalid');
    const method = req.method ?? 'GET';
    const path = url.pathname.replace(/^\/api2\/json/, '');
    const route = `${method} ${path.replace(/\/qemu\/\d+/, '/qemu/:vmid')}`;
    this.requestCounts.set(route, (this.requestCounts.get(route) ?? 0) + 1);
    if (this.faults.remaining > 0) {
      this.faults.remaining--;
      throw new PveError(this.faults.status, 'Service Unavailable');
    }
    if (req.headers.authorization !== `PVEAPIToken=${this.options.token}`) throw new PveError(401, 'authentication failure');
    if (method === 'GET' && path === '/nodes') return ['pve1', 'pve2'].map((node) => ({ node, status: 'online', type: 'node' }));
    const nodeStatus = /^\/nodes\/(pve1|pve2)\/status$/.exec(path);
    if (method === 'GET' && nodeStatus)
      return { cpuinfo: { cpus: 8, sockets: 1, model: 'QEMU Virtual CPU' }, memory: { total: 32 * 1024 ** 3, used: 0, free: 32 * 1024 ** 3 }, uptime: 1 };
    if (method === 'GET' && path === '/cluster/nextid') return String(Math.max(100, ...[...this.vms.keys()].filter((id) => id < 9000).map((id) => id + 1)));
    const list = /^\/nodes\/([^/]+)\/qemu$/.exec(path);
    if (method === 'GET' && list) return this.list(list[1] ?? '');
    const vmPath = /^\/nodes\/([^/]+)\/qemu\/(\d+)(\/.*)?$/.exec(path);
    if (!vmPath) throw new PveError(501, `Method '${method} ${path}' not implemented`);
    const [, node = '', id = '', rest = ''] = vmPath;
    const vm = this.required(Number(id), node);
    const op = `${method} ${rest}`;
    if (op === 'GET /status/current') return this.summary(vm);
    if (op === 'POST /clone') return this.clone(vm, form);
    if (op === 'PUT /config') return this.configure(vm, form);
    if (op === 'PUT /resize') return this.resize(vm, form);
    if (op === 'POST /status/start') return this.power(vm, 'running');
    if (op === 'POST /status/stop' || op === 'POST /status/shutdown') return this.power(vm, 'stopped');
    if (op === 'DELETE ') return this.destroy(vm);
    throw new PveError(501, `Method '${method} ${path}' not implemented`);
  }

  private list(node: string): unknown[] {
    const vms = [...this.vms.values()].filter((vm) => this.live(vm.vmid, node) !== undefined);
    return vms.map((vm) => ({ ...this.summary(vm), ...(vm.template ? { template: 1 } : {}) }));
  }

  private summary(vm: PveVmRecord): Record<string, unknown> {
    return {
      vmid: vm.vmid,
      name: vm.name,
      status: vm.status,
      qmpstatus: vm.status,
      ...(vm.lock ? { lock: vm.lock } : {}),
      ...(vm.config.tags ? { tags: vm.config.tags } : {}),
      cpus: Number(vm.config.cores ?? 1),
      maxmem: Number(vm.config.memory ?? 512) * 1024 * 1024,
      maxdisk: vm.diskGib * 1024 ** 3,
    };
  }

  private clone(source: PveVmRecord, form: URLSearchParams): string {
    const newid = Number(form.get('newid'));
    const name = form.get('name') ?? `Copy-of-VM-${source.name}`;
    if (!Number.isInteger(newid) || newid < 100)
      throw new PveError(400, 'Parameter verification failed.', { newid: 'invalid format - value must be an integer >= 100' });
    if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(name))
      throw new PveError(400, 'Parameter verification failed.', { name: 'invalid format - value does not look like a valid DNS name' });
    if (this.vms.has(newid)) throw new PveError(500, `unable to create VM ${newid} - VM ${newid} already exists on node '${source.node}'`);
    this.vms.set(newid, {
      vmid: newid,
      node: source.node,
      name,
      template: false,
      status: 'stopped',
      lock: 'clone',
      config: { ...source.config },
      diskGib: source.diskGib,
      deleted: false,
    });
    return this.task(newid, 'qmclone', this.options.cloneMs, (vm) => (vm.lock = undefined));
  }

  private configure(vm: PveVmRecord, form: URLSearchParams): null {
    this.unlocked(vm);
    for (const [key, value] of form) vm.config[key] = key === 'sshkeys' ? decodeURIComponent(value) : value;
    return null;
  }

  private resize(vm: PveVmRecord, form: URLSearchParams): null {
    this.unlocked(vm);
    const size = /^(\d+)G$/.exec(form.get('size') ?? '');
    if (form.get('disk') !== 'scsi0' || !size) throw new PveError(400, 'Parameter verification failed.', { size: 'invalid format' });
    if (Number(size[1]) < vm.diskGib) throw new PveError(500, 'shrinking disks is not supported');
    vm.diskGib = Number(size[1]);
    return null;
  }

  // A started VM reports `running` as soon as its task launched the QEMU process; a stop takes until the guest is off.
  private power(vm: PveVmRecord, to: 'running' | 'stopped'): string {
    this.unlocked(vm);
    if (to === 'running' && vm.status === 'running') throw new PveError(500, `VM ${vm.vmid} already running`);
    if (to === 'running') return this.task(vm.vmid, 'qmstart', 0, (v) => (v.status = 'running'));
    if (vm.status === 'stopped') return this.task(vm.vmid, 'qmstop', 0, () => undefined);
    return this.task(vm.vmid, 'qmstop', this.options.stopMs, (v) => (v.status = 'stopped'));
  }

  private destroy(vm: PveVmRecord): string {
    if (this.pending.has(vm.vmid)) throw new PveError(500, `can't lock file '/var/lock/qemu-server/lock-${vm.vmid}.conf' - got timeout`);
    this.unlocked(vm);
    if (vm.status === 'running') throw new PveError(500, `VM ${vm.vmid} is running - destroy failed`);
    return this.task(vm.vmid, 'qmdestroy', this.options.deleteMs, (v) => (v.deleted = true));
  }

  private unlocked(vm: PveVmRecord): void {
    if (vm.lock) throw new PveError(500, `VM is locked (${vm.lock})`);
  }

  /** Starts a worker task and answers its UPID (`UPID:node:pid:pstart:starttime:type:id:user:`). */
  private task(vmid: number, type: string, ms: number, apply: (vm: PveVmRecord) => void): string {
    const vm = this.vms.get(vmid)!;
    if (ms === 0) apply(vm);
    else this.pending.set(vmid, { at: Date.now() + ms, apply: () => apply(vm) });
    const hex = (n: number) => n.toString(16).toUpperCase().padStart(8, '0');
    return `UPID:${vm.node}:${hex(process.pid)}:${hex(vmid)}:${hex(Math.floor(Date.now() / 1000))}:${type}:${vmid}:bc@pve!provider:`;
  }

  private settle(vm: PveVmRecord): void {
    const next = this.pending.get(vm.vmid);
    if (!next || Date.now() < next.at) return;
    this.pending.delete(vm.vmid);
    next.apply();
  }

  /** The VM, settled, while it exists on `node`. */
  private live(vmid: number, node: string): PveVmRecord | undefined {
    const vm = this.vms.get(vmid);
    if (vm) this.settle(vm);
    return vm && !vm.deleted && vm.node === node ? vm : undefined;
  }

  /** A missing VM is the 500 the API answers when the VM's configuration file does not exist. */
  private required(vmid: number, node: string): PveVmRecord {
    const vm = this.live(vmid, node);
    if (!vm) throw new PveError(500, `Configuration file 'nodes/${node}/qemu-server/${vmid}.conf' does not exist`);
    return vm;
  }
}
