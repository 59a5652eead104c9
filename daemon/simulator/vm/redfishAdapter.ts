import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BaseMessages, badValue, notAllowedNow, notFound, redfishError, success, type SimResponse } from '../bmc/responses.ts';
import {
  BootOverrideEnabledValues,
  BootOverrideTargets,
  SystemRefusal,
  SystemResetTypes,
  type BootOverride,
  type SystemBackend,
  type SystemResetType,
} from './systemBackend.ts';

/**
 * The Redfish face of VM-backed systems: one BMC serving several systems (`/redfish/v1/Systems/<id>`, as sushy-style
 * emulators do), so an enrolled BMC address names its system. Basic auth only. This is the one file that joins the
 * VM backend to Redfish; the mockup-tree simulator keeps its own router.
 */
export interface VmBmcOptions {
  systems: readonly SystemBackend[];
  username: string;
  password: string;
  host?: string;
  port?: number;
}

export interface VmBmc {
  url: string;
  /** The address to enrol for one system: the BMC URL plus the system's path. */
  systemUrl(id: string): string;
  close(): Promise<void>;
}

const root = '/redfish/v1';
const ok = (body: unknown): SimResponse => ({ status: 200, body });
const link = (path: string) => ({ '@odata.id': path });
const collection = (path: string, type: string, members: string[]) =>
  ok({ '@odata.id': path, '@odata.type': `#${type}.${type}`, Name: type, Members: members.map(link), 'Members@odata.count': members.length });

function systemDocument(system: SystemBackend): unknown {
  const path = `${root}/Systems/${system.id}`;
  const inv = system.inventory();
  const boot = system.bootOverride();
  const evidence = system.resetEvidence();
  return {
    '@odata.id': path,
    '@odata.type': '#ComputerSystem.v1_20_0.ComputerSystem',
    Id: system.id,
    Name: system.id,
    SystemType: 'Physical',
    Manufacturer: 'Better Compute',
    Model: 'Emulated Server (QEMU)',
    SerialNumber: system.id,
    UUID: inv.uuid,
    PowerState: system.powerState(),
    // What a client tells a restart that happened by, beside PowerState (whose Off lasts only while the BMC answers).
    ...(evidence.lastResetTime ? { LastResetTime: evidence.lastResetTime } : {}),
    ...(evidence.bootProgress ? { BootProgress: { LastState: evidence.bootProgress.lastState, LastStateTime: evidence.bootProgress.lastStateTime } } : {}),
    Status: { State: 'Enabled', Health: 'OK' },
    // `-smp N` makes N vCPUs, each a core of its own: what placement counts (CoreCount, Redfish 2020.3).
    ProcessorSummary: { Count: inv.cpus, CoreCount: inv.cpus, Model: 'QEMU TCG vCPU' },
    MemorySummary: { TotalSystemMemoryGiB: inv.memoryMiB / 1024 },
    Boot: {
      BootSourceOverrideTarget: boot.target,
      BootSourceOverrideEnabled: boot.enabled,
      'BootSourceOverrideTarget@Redfish.AllowableValues': [...BootOverrideTargets],
    },
    EthernetInterfaces: link(`${path}/EthernetInterfaces`),
    Storage: link(`${path}/Storage`),
    VirtualMedia: link(`${path}/VirtualMedia`),
    Actions: {
      '#ComputerSystem.Reset': { target: `${path}/Actions/ComputerSystem.Reset`, 'ResetType@Redfish.AllowableValues': [...SystemResetTypes] },
    },
  };
}

function mediaDocument(system: SystemBackend): unknown {
  const path = `${root}/Systems/${system.id}/VirtualMedia/CD1`;
  const media = system.media();
  return {
    '@odata.id': path,
    '@odata.type': '#VirtualMedia.v1_6_0.VirtualMedia',
    Id: 'CD1',
    Name: 'Virtual CD',
    MediaTypes: ['CD', 'DVD'],
    Image: media.image,
    ImageName: media.image ? media.image.split('/').pop() : null,
    Inserted: media.inserted,
    WriteProtected: true,
    ConnectedVia: media.inserted ? 'URI' : 'NotConnected',
    TransferProtocolType: 'HTTP',
    Actions: {
      '#VirtualMedia.InsertMedia': { target: `${path}/Actions/VirtualMedia.InsertMedia` },
      '#VirtualMedia.EjectMedia': { target: `${path}/Actions/VirtualMedia.EjectMedia` },
    },
  };
}

function patchBoot(system: SystemBackend, body: Record<string, unknown>): SimResponse {
  const unknown = Object.keys(body).find((k) => k !== 'Boot');
  if (unknown) return redfishError(400, BaseMessages.PropertyNotWritable, `The property ${unknown} is a read only property and cannot be assigned a value.`);
  const boot = body.Boot as Record<string, unknown> | undefined;
  if (typeof boot !== 'object' || boot === null) return badValue('Boot', boot);
  const change: Partial<BootOverride> = {};
  for (const [name, value] of Object.entries(boot)) {
    if (name === 'BootSourceOverrideTarget' && (BootOverrideTargets as readonly unknown[]).includes(value)) change.target = value as BootOverride['target'];
    else if (name === 'BootSourceOverrideEnabled' && (BootOverrideEnabledValues as readonly unknown[]).includes(value))
      change.enabled = value as BootOverride['enabled'];
    else if (name === 'BootSourceOverrideMode') continue;
    else return badValue(`Boot/${name}`, value);
  }
  system.setBootOverride(change);
  return success();
}

async function act(run: () => Promise<void>): Promise<SimResponse> {
  try {
    await run();
    return success(204);
  } catch (err) {
    if (!(err instanceof SystemRefusal)) throw err;
    if (err.code === 'INVALID_IN_STATE') return notAllowedNow(err.message.replace(/ while .*/, ''));
    return redfishError(err.code === 'MEDIA_UNAVAILABLE' ? 502 : 400, BaseMessages.ActionParameterNotSupported, err.message);
  }
}

async function route(systems: ReadonlyMap<string, SystemBackend>, method: string, path: string, body: Record<string, unknown>): Promise<SimResponse> {
  if (path === root || path === `${root}/`)
    return ok({
      '@odata.id': root,
      '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot',
      Id: 'RootService',
      RedfishVersion: '1.15.0',
      Systems: link(`${root}/Systems`),
    });
  if (path === `${root}/Systems`)
    return collection(
      path,
      'ComputerSystemCollection',
      [...systems.keys()].map((id) => `${root}/Systems/${id}`),
    );
  const match = /^\/redfish\/v1\/Systems\/([^/]+)(\/.*)?$/.exec(path);
  const system = match ? systems.get(decodeURIComponent(match[1]!)) : undefined;
  if (!system) return notFound(path);
  const base = `${root}/Systems/${system.id}`;
  const rest = match![2] ?? '';
  const inv = system.inventory();
  if (method === 'PATCH' && rest === '') return patchBoot(system, body);
  if (method === 'POST') {
    if (rest === '/Actions/ComputerSystem.Reset') {
      const type = body.ResetType;
      if (typeof type !== 'string') return redfishError(400, BaseMessages.ActionParameterMissing, 'The action requires the parameter ResetType.');
      if (!(SystemResetTypes as readonly string[]).includes(type))
        return redfishError(400, BaseMessages.ActionParameterNotSupported, `The parameter ResetType with the value ${type} is not supported by this system.`);
      return act(() => system.reset(type as SystemResetType));
    }
    if (rest === '/VirtualMedia/CD1/Actions/VirtualMedia.InsertMedia') {
      if (typeof body.Image !== 'string' || body.Image === '')
        return redfishError(400, BaseMessages.ActionParameterMissing, 'The action requires the parameter Image.');
      return act(() => system.insertMedia(body.Image as string));
    }
    if (rest === '/VirtualMedia/CD1/Actions/VirtualMedia.EjectMedia') return act(() => system.ejectMedia());
    return notFound(path);
  }
  if (method !== 'GET') return redfishError(405, BaseMessages.ActionNotSupported, `${method} is not supported on ${path}.`);
  if (rest === '') return ok(systemDocument(system));
  if (rest === '/EthernetInterfaces')
    return collection(
      path,
      'EthernetInterfaceCollection',
      inv.nics.map((n) => `${base}/EthernetInterfaces/${n.id}`),
    );
  if (rest === '/Storage') return collection(path, 'StorageCollection', [`${base}/Storage/1`]);
  if (rest === '/Storage/1')
    return ok({ '@odata.id': path, Id: '1', Name: 'virtio-blk', Drives: inv.disks.map((d) => link(`${base}/Storage/1/Drives/${d.id}`)) });
  if (rest === '/VirtualMedia') return collection(path, 'VirtualMediaCollection', [`${base}/VirtualMedia/CD1`]);
  if (rest === '/VirtualMedia/CD1') return ok(mediaDocument(system));
  const nic = inv.nics.find((n) => rest === `/EthernetInterfaces/${n.id}`);
  if (nic) return ok({ '@odata.id': path, Id: nic.id, Name: nic.id, MACAddress: nic.mac, PermanentMACAddress: nic.mac, Status: { State: 'Enabled' } });
  const disk = inv.disks.find((d) => rest === `/Storage/1/Drives/${d.id}`);
  if (disk)
    return ok({
      '@odata.id': path,
      Id: disk.id,
      Name: disk.id,
      Model: 'QEMU virtio-blk',
      SerialNumber: disk.serial,
      CapacityBytes: disk.sizeBytes,
      Status: { State: 'Enabled' },
    });
  return notFound(path);
}

function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 1 << 20) chunks.push(c);
    });
    req.on('end', () => {
      if (size > 1 << 20) return resolve(undefined);
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        const parsed: unknown = text === '' ? {} : JSON.parse(text);
        resolve(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined);
      } catch {
        resolve(undefined);
      }
    });
  });
}

export async function startVmBmc(options: VmBmcOptions): Promise<VmBmc> {
  const systems = new Map(options.systems.map((s) => [s.id, s]));
  const expected = Buffer.from(`Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`);
  const authorised = (header: string | undefined) => {
    const given = Buffer.from(header ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!.replace(/\/+$/, '') || '/';
    const send = (response: SimResponse) => {
      const payload = response.body === undefined || response.status === 204 ? undefined : Buffer.from(JSON.stringify(response.body));
      res.writeHead(response.status, { 'OData-Version': '4.0', ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}) });
      res.end(payload);
    };
    // The service root is the one document DSP0266 lets anyone read.
    if (path !== root && !authorised(req.headers.authorization)) return send(redfishError(401, BaseMessages.NoValidSession, 'Authentication required.'));
    void readJson(req)
      .then(async (body) => {
        if (!body) return send(redfishError(400, BaseMessages.MalformedJSON, 'The request body submitted was malformed JSON.'));
        send(await route(systems, (req.method ?? 'GET').toUpperCase(), path, body));
      })
      .catch(() => send(redfishError(500, BaseMessages.OperationNotAllowed, 'internal error')));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  return {
    url,
    systemUrl: (id) => `${url}${root}/Systems/${id}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
