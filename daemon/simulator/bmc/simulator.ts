import { X509Certificate, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isAbsolute } from 'node:path';

import { AuthGate } from './auth.ts';
import { shapeTree } from './dialectTree.ts';
import { redfishTreePath } from './fixtures.ts';
import { FirmwareModel, type FirmwareImage } from './firmware.ts';
import { VirtualMediaModel } from './media.ts';
import { RemoteMediaModel } from './remoteMedia.ts';
import { quirksOf, type BmcDialectName, type BmcQuirks } from './quirks.ts';
import { BaseMessages, redfishError, type SimResponse } from './responses.ts';
import { route, type SimModels } from './router.ts';
import { SystemModel, type BootListener, type PowerLossListener, type SimSystem, type SimSystemState } from './system.ts';
import { TaskModel, type TaskOutcome } from './tasks.ts';
import { Timers } from './timers.ts';
import { discoverTopology } from './topology.ts';
import { personalise, synthesiseSystems, systemsOf, type SystemIdentity } from './treeShape.ts';
import { deepMerge, isPlainObject, toKey, TreeStore, type Json } from './treeStore.ts';
import { VolumeModel } from './volumes.ts';

export type { BootEvent, BootListener, PowerLossListener, SimSystem } from './system.ts';

export interface BmcSimulatorOptions {
  /** A tree folder name under the fixtures root (e.g. 'hpe-ilo5-dl325') or an absolute path to a mockup tree. */
  tree: string;
  username: string;
  password: string;
  /** 0 (default) picks a free port. The server only ever listens on 127.0.0.1. */
  port?: number;
  tls?: boolean;
  powerDelayMs?: number;
  mediaDelayMs?: number;
  taskDurationMs?: number;
  taskOutcome?: TaskOutcome;
  /** Deep-merged into the (first) ComputerSystem at start; `undefined` deletes a key (e.g. to drop inline AllowableValues). */
  systemOverrides?: Json;
  /** Extra documents by `@odata.id` (e.g. an ActionInfo the tree lacks). */
  extraResources?: Record<string, Json>;
  /** The firmware packages SimpleUpdate may be given, by image URI: the component each is for and its version. */
  firmwareImages?: Record<string, FirmwareImage>;
  /** Fired on the first system's boots. */
  onBoot?: BootListener;
  /** How this BMC departs from the textbook: a named dialect or quirks one by one (see `quirks.ts`). */
  dialect?: BmcDialectName | Partial<BmcQuirks>;
  /**
   * The systems it serves: a count (copies of the tree's first system, each with its own UUID, serial and MACs), or
   * the identity of each. Several systems each get their own virtual media. Default: the tree's.
   */
  systems?: number | SystemIdentity[];
}

export interface RequestLogEntry {
  method: string;
  path: string;
  body: unknown;
  time: number;
  auth: 'basic' | 'session' | 'none';
  /** The If-Match header, so tests can check that writes were ETag-guarded. */
  ifMatch: string | undefined;
  status?: number;
}

/** The first system's state, plus the BMC's own. */
export interface BmcSimulatorState extends SimSystemState {
  readonly sessionCount: number;
  readonly appliedFirmware: readonly string[];
}

export interface BmcSimulator {
  url: string;
  port: number;
  /** With the `httpsRedirect` quirk: the plain-http listener that redirects every request to `url`. */
  redirectUrl: string | undefined;
  /** Every ComputerSystem, in the order the Systems collection lists them (see `SimSystem`: where a host plugs in). */
  systems: readonly SimSystem[];
  /** The BMC address that names one system: `<url><system @odata.id>`. */
  addressOf(system: SimSystem): string;
  /** base64 SHA-256 of the served certificate's SubjectPublicKeyInfo (TLS only). */
  spkiSha256: string | undefined;
  state: BmcSimulatorState;
  requestLog: RequestLogEntry[];
  /** The first system's boots. */
  onBoot(listener: BootListener): () => void;
  /** The first system's power losses. */
  onPowerLoss(listener: PowerLossListener): () => void;
  /** The live document behind a URI, as the next GET would return it. */
  resource(uri: string): Json | undefined;
  /** The first system's mounted CD/DVD image (what a `Cd` boot reads), once the mount is visible. */
  insertedMedia(): string | undefined;
  /** Cuts the BMC off the network (every connection is reset) or plugs it back in; the host keeps running. */
  setReachable(reachable: boolean): void;
  close(): Promise<void>;
}

const certDir = new URL('./certs/', import.meta.url);
const maxBodyBytes = 1 << 20;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) req.destroy(new Error('request body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, method: string, response: SimResponse): void {
  const payload = response.body === undefined ? undefined : Buffer.from(JSON.stringify(response.body));
  res.statusCode = response.status;
  res.setHeader('OData-Version', '4.0');
  res.setHeader('Cache-Control', 'no-cache');
  for (const [name, value] of Object.entries(response.headers ?? {})) res.setHeader(name, value);
  if (payload) {
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', payload.length);
  }
  res.end(method === 'HEAD' ? undefined : payload);
}

function loadStore(options: BmcSimulatorOptions, quirks: BmcQuirks): TreeStore {
  const store = new TreeStore(isAbsolute(options.tree) ? options.tree : redfishTreePath(options.tree));
  for (const [uri, doc] of Object.entries(options.extraResources ?? {})) {
    const key = toKey(uri);
    if (key === undefined) throw new Error(`extraResources key ${uri} is not under /redfish/v1`);
    store.put(key, structuredClone(doc));
  }
  const identities = Array.isArray(options.systems) ? options.systems : [];
  const count = typeof options.systems === 'number' ? options.systems : identities.length;
  if (count > 1) synthesiseSystems(store, count);
  systemsOf(store).forEach((system, i) => identities[i] && personalise(store, system.key, identities[i]));
  const first = systemsOf(store)[0];
  if (first && options.systemOverrides) deepMerge(first.doc, options.systemOverrides);
  shapeTree(store, quirks, Math.max(count, systemsOf(store).length));
  return store;
}

/** Every `every`-th request answered 429/503 with Retry-After, without acting on it (`BmcQuirks.throttle`). */
function throttled(quirks: BmcQuirks, count: number): SimResponse | undefined {
  const t = quirks.throttle;
  if (!t || count % t.every !== 0) return undefined;
  const response = redfishError(t.status, BaseMessages.OperationNotAllowed, 'The service is temporarily unable to handle the request.');
  return { ...response, headers: { 'Retry-After': String(t.retryAfterSeconds) } };
}

export async function startBmcSimulator(options: BmcSimulatorOptions): Promise<BmcSimulator> {
  const quirks = quirksOf(options.dialect);
  const store = loadStore(options, quirks);
  // Discovered after the overrides so overridden Actions (targets, AllowableValues, ActionInfo) take effect.
  const topology = discoverTopology(store);
  const timers = new Timers();
  const requestLog: RequestLogEntry[] = [];
  const media = new VirtualMediaModel(store, options.mediaDelayMs ?? 0, timers, quirks.insertFlags === 'imageOnly');
  const remoteMedia = new RemoteMediaModel(store, topology.mediaCollectionKeys, timers, options.mediaDelayMs ?? 0, () => media.dropAll(topology.mediaKeys));
  if (quirks.remoteMedia === 'disabled') remoteMedia.disable();
  const systems = topology.systems.map((t) => new SystemModel(store, t, media, timers, { powerDelayMs: options.powerDelayMs ?? 0, quirks }));
  const first = systems[0]!;
  if (options.onBoot) first.onBoot(options.onBoot);
  const firmware = new FirmwareModel(store, options.firmwareImages ?? {});
  const models: SimModels = {
    store,
    topology,
    quirks,
    auth: new AuthGate(options.username, options.password),
    systems: new Map(systems.map((system) => [system.topology.key, system])),
    media,
    remoteMedia,
    tasks: new TaskModel(
      store,
      topology.tasksKey,
      topology.transferProtocols,
      timers,
      {
        durationMs: options.taskDurationMs ?? 50,
        outcome: options.taskOutcome ?? 'Completed',
      },
      firmware,
    ),
    volumes: new VolumeModel(store),
  };
  let requests = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const raw = await readBody(req);
    let body: unknown;
    const entry: RequestLogEntry = {
      method,
      path,
      body: undefined,
      time: Date.now(),
      auth: req.headers['x-auth-token'] ? 'session' : req.headers.authorization ? 'basic' : 'none',
      ifMatch: typeof req.headers['if-match'] === 'string' ? req.headers['if-match'] : undefined,
    };
    requestLog.push(entry);
    try {
      body = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
    } catch {
      entry.status = 400;
      return send(res, method, redfishError(400, BaseMessages.MalformedJSON, 'The request body submitted was malformed JSON.'));
    }
    entry.body = raw.length === 0 ? undefined : body;
    requests += 1;
    const response =
      throttled(quirks, requests) ??
      (isPlainObject(body)
        ? route(models, { method, path, key: toKey(path), headers: req.headers, body })
        : redfishError(400, BaseMessages.MalformedJSON, 'The request body must be a JSON object.'));
    entry.status = response.status;
    send(res, method, response);
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 'GET', redfishError(500, BaseMessages.OperationNotAllowed, String(error)));
    });
  };
  let server: Server;
  let spkiSha256: string | undefined;
  if (options.tls) {
    const cert = readFileSync(new URL('bmc-sim-cert.pem', certDir));
    const key = readFileSync(new URL('bmc-sim-key.pem', certDir));
    const spki = new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' });
    spkiSha256 = createHash('sha256').update(spki).digest('base64');
    server = createHttpsServer({ cert, key }, listener);
  } else {
    server = createHttpServer(listener);
  }
  let reachable = true;
  server.on('connection', (socket) => {
    if (!reachable) socket.destroy();
  });
  const port = await listen(server, options.port ?? 0);
  const url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  // A BMC that answers plain http with a redirect to its https port.
  const redirector =
    quirks.httpsRedirect && options.tls
      ? createHttpServer((req, res) => {
          res.writeHead(308, { Location: `${url}${req.url ?? '/'}` }).end();
        })
      : undefined;
  const redirectPort = redirector ? await listen(redirector, 0) : undefined;

  return {
    url,
    port,
    redirectUrl: redirectPort === undefined ? undefined : `http://127.0.0.1:${redirectPort}`,
    spkiSha256,
    requestLog,
    systems,
    addressOf: (system) => `${url}${system.uri}`,
    state: {
      get powerState() {
        return first.state.powerState;
      },
      get bootOverride() {
        return first.state.bootOverride;
      },
      get bootOverrideMode() {
        return first.state.bootOverrideMode;
      },
      get boots() {
        return first.state.boots;
      },
      get biosPending() {
        return first.state.biosPending;
      },
      get nmiCount() {
        return first.state.nmiCount;
      },
      get sessionCount() {
        return models.auth.sessionCount;
      },
      get appliedFirmware() {
        return [...firmware.applied];
      },
    },
    onBoot: (fn) => first.onBoot(fn),
    onPowerLoss: (fn) => first.onPowerLoss(fn),
    resource(uri: string): Json | undefined {
      const key = toKey(uri);
      return key === undefined ? undefined : store.get(key);
    },
    insertedMedia: () => first.insertedMedia(),
    setReachable(value: boolean): void {
      reachable = value;
      if (!value) server.closeAllConnections();
    },
    async close(): Promise<void> {
      timers.clear();
      for (const s of [server, ...(redirector ? [redirector] : [])]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}
