import { X509Certificate, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isAbsolute } from 'node:path';

import { AuthGate } from './auth.ts';
import { BiosModel } from './bios.ts';
import { consumeBootOverride } from './boot.ts';
import { redfishTreePath } from './fixtures.ts';
import { VirtualMediaModel } from './media.ts';
import { PowerModel, type SimPowerState } from './power.ts';
import { BaseMessages, redfishError, type SimResponse } from './responses.ts';
import { route, type SimModels } from './router.ts';
import { TaskModel, type TaskOutcome } from './tasks.ts';
import { Timers } from './timers.ts';
import { discoverTopology } from './topology.ts';
import { deepMerge, isPlainObject, toKey, TreeStore, type Json } from './treeStore.ts';
import { VolumeModel } from './volumes.ts';

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
  /** Deep-merged into the ComputerSystem at start; `undefined` deletes a key (e.g. to drop inline AllowableValues). */
  systemOverrides?: Json;
  /** Extra documents by `@odata.id` (e.g. an ActionInfo the tree lacks). */
  extraResources?: Record<string, Json>;
  onBoot?: BootListener;
}

export interface BootEvent {
  bootTarget: string;
  bootCount: number;
  at: number;
}
export type BootListener = (bootTarget: string, event: BootEvent) => void;
/** The host stopped running: a power-off or a restart was accepted (fired before PowerState settles). */
export type PowerLossListener = (reason: 'off' | 'restart') => void;

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

export interface BmcSimulatorState {
  readonly powerState: SimPowerState;
  readonly bootOverride: { target: unknown; enabled: unknown };
  readonly boots: readonly BootEvent[];
  readonly biosPending: Json;
  readonly nmiCount: number;
  readonly sessionCount: number;
  readonly appliedFirmware: readonly string[];
}

export interface BmcSimulator {
  url: string;
  port: number;
  /** base64 SHA-256 of the served certificate's SubjectPublicKeyInfo (TLS only). */
  spkiSha256: string | undefined;
  state: BmcSimulatorState;
  requestLog: RequestLogEntry[];
  onBoot(listener: BootListener): () => void;
  onPowerLoss(listener: PowerLossListener): () => void;
  /** The live document behind a URI, as the next GET would return it. */
  resource(uri: string): Json | undefined;
  /** The image URL mounted in the CD/DVD virtual media slot (what a `Cd` boot reads), once the mount is visible. */
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

function loadStore(options: BmcSimulatorOptions): { store: TreeStore; system: Json } {
  const store = new TreeStore(isAbsolute(options.tree) ? options.tree : redfishTreePath(options.tree));
  for (const [uri, doc] of Object.entries(options.extraResources ?? {})) {
    const key = toKey(uri);
    if (key === undefined) throw new Error(`extraResources key ${uri} is not under /redfish/v1`);
    store.put(key, structuredClone(doc));
  }
  const topology = discoverTopology(store);
  const system = store.get(topology.systemKey) as Json;
  if (options.systemOverrides) deepMerge(system, options.systemOverrides);
  return { store, system };
}

export async function startBmcSimulator(options: BmcSimulatorOptions): Promise<BmcSimulator> {
  const { store, system } = loadStore(options);
  // Discovered after the overrides so overridden Actions (targets, AllowableValues, ActionInfo) take effect.
  const topology = discoverTopology(store);
  const timers = new Timers();
  const requestLog: RequestLogEntry[] = [];
  const listeners = new Set<BootListener>(options.onBoot ? [options.onBoot] : []);
  const boots: BootEvent[] = [];
  const powerLossListeners = new Set<PowerLossListener>();

  const media = new VirtualMediaModel(store, options.mediaDelayMs ?? 0, timers);
  const bios = new BiosModel(store, topology.biosKey, topology.biosSettingsKey);
  const onPoweredOn = (): void => {
    let target = consumeBootOverride(system);
    if (target === 'None' && media.consumeBootOnNextReset(topology.mediaKeys)) target = 'Cd';
    bios.applyPending();
    const event: BootEvent = { bootTarget: target, bootCount: boots.length + 1, at: Date.now() };
    boots.push(event);
    for (const listener of listeners) listener(target, event);
  };
  const models: SimModels = {
    store,
    topology,
    auth: new AuthGate(options.username, options.password),
    power: new PowerModel(system, topology.resetAllowed, options.powerDelayMs ?? 0, timers, onPoweredOn, (reason) => {
      for (const listener of powerLossListeners) listener(reason);
    }),
    media,
    bios,
    tasks: new TaskModel(store, topology.tasksKey, topology.transferProtocols, timers, {
      durationMs: options.taskDurationMs ?? 50,
      outcome: options.taskOutcome ?? 'Completed',
    }),
    volumes: new VolumeModel(store),
  };

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
    const response = isPlainObject(body)
      ? route(models, { method, path, key: toKey(path), headers: req.headers, body })
      : redfishError(400, BaseMessages.MalformedJSON, 'The request body must be a JSON object.');
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    spkiSha256,
    requestLog,
    state: {
      get powerState() { return models.power.reported; },
      get bootOverride() {
        const boot = isPlainObject(system.Boot) ? system.Boot : {};
        return { target: boot.BootSourceOverrideTarget, enabled: boot.BootSourceOverrideEnabled };
      },
      get boots() { return [...boots]; },
      get biosPending() { return bios.pending; },
      get nmiCount() { return models.power.nmiCount; },
      get sessionCount() { return models.auth.sessionCount; },
      get appliedFirmware() { return [...models.tasks.appliedImages]; },
    },
    onBoot(fn: BootListener): () => void {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    onPowerLoss(fn: PowerLossListener): () => void {
      powerLossListeners.add(fn);
      return () => powerLossListeners.delete(fn);
    },
    resource(uri: string): Json | undefined {
      const key = toKey(uri);
      return key === undefined ? undefined : store.get(key);
    },
    insertedMedia(): string | undefined {
      for (const key of topology.mediaKeys) {
        const slot = store.get(key);
        const types = Array.isArray(slot?.MediaTypes) ? slot.MediaTypes : [];
        if (!types.includes('CD') && !types.includes('DVD')) continue;
        if (slot?.Inserted === true && typeof slot.Image === 'string' && slot.Image !== '') return slot.Image;
      }
      return undefined;
    },
    setReachable(value: boolean): void {
      reachable = value;
      if (!value) server.closeAllConnections();
    },
    async close(): Promise<void> {
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
