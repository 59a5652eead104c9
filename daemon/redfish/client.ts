import { getBiosAttributes, setBiosAttributes, type BiosAttributes, type BiosWriteResult } from './bios.ts';
import { setOneTimeBoot, type OneTimeBootTarget } from './boot.ts';
import type { ClientContext, RedfishTiming } from './context.ts';
import { Discovery } from './discovery.ts';
import { RedfishError } from './errors.ts';
import { createRedfishHttp, type RedfishAuthMode } from './http.ts';
import type { Inventory } from './inventory.ts';
import { getPowerState, setPower, type PowerAction, type PowerState, type SetPowerResult } from './power.ts';
import { getInventory } from './readInventory.ts';
import { createTransport, type RedfishTlsOptions } from './transport.ts';
import { simpleUpdate, type UpdateResult } from './update.ts';
import { ejectMedia, insertMedia, type MediaResult } from './virtualMedia.ts';
import { createVolume, deleteVolume, listVolumes, type CreateVolumeSpec, type VolumeInfo } from './volumes.ts';

export interface RedfishClientOptions {
  /** Scheme, host and port of the BMC, e.g. `https://10.0.0.5`. Any path is ignored: the root is /redfish/v1/. */
  baseUrl: string;
  username: string;
  password: string;
  auth: RedfishAuthMode;
  tls?: RedfishTlsOptions;
  /** Per HTTP request. */
  timeoutMs: number;
  /** Wait budgets for state changes that the BMC confirms only by polling. */
  timing?: Partial<RedfishTiming>;
  /** Pick this ComputerSystem (`@odata.id`) on multi-system services; default: the first member. */
  systemUri?: string;
}

export interface RedfishClient {
  getPowerState(): Promise<PowerState>;
  setPower(action: PowerAction): Promise<SetPowerResult>;
  setOneTimeBoot(target: OneTimeBootTarget): Promise<void>;
  insertMedia(imageUrl: string): Promise<MediaResult>;
  ejectMedia(): Promise<MediaResult>;
  getInventory(): Promise<Inventory>;
  getBiosAttributes(): Promise<BiosAttributes>;
  setBiosAttributes(attrs: BiosAttributes): Promise<BiosWriteResult>;
  simpleUpdate(imageUri: string): Promise<UpdateResult>;
  listVolumes(): Promise<VolumeInfo[]>;
  createVolume(spec: CreateVolumeSpec): Promise<VolumeInfo>;
  deleteVolume(volumeUri: string): Promise<void>;
  /** Ends the Redfish session (session auth); BMCs have only a handful of session slots. */
  close(): Promise<void>;
}

const defaultTiming: RedfishTiming = {
  pollIntervalMs: 1_000,
  powerTimeoutMs: 5 * 60_000,
  mediaTimeoutMs: 2 * 60_000,
  taskTimeoutMs: 60 * 60_000,
};

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function createRedfishClient(options: RedfishClientOptions): RedfishClient {
  let origin: URL;
  try {
    origin = new URL(options.baseUrl);
  } catch (cause) {
    throw new RedfishError('REDFISH_BAD_REQUEST', 'baseUrl is not a valid URL', { cause });
  }
  if (origin.protocol !== 'https:' && origin.protocol !== 'http:') {
    throw new RedfishError('REDFISH_BAD_REQUEST', `baseUrl must be http(s), not ${origin.protocol}`);
  }
  if (origin.protocol === 'http:' && options.tls?.pinnedSpkiSha256 !== undefined) {
    // A pin on plain HTTP would silently protect nothing.
    throw new RedfishError('REDFISH_BAD_REQUEST', 'A pinned certificate requires an https baseUrl');
  }
  const transport = createTransport({ origin, timeoutMs: options.timeoutMs, ...(options.tls ? { tls: options.tls } : {}) });
  const http = createRedfishHttp(transport, { username: options.username, password: options.password, auth: options.auth });
  const ctx: ClientContext = {
    http,
    discovery: new Discovery(http, options.systemUri),
    timing: { ...defaultTiming, ...definedOnly(options.timing ?? {}) },
  };

  return {
    getPowerState: () => getPowerState(ctx),
    setPower: (action) => setPower(ctx, action),
    setOneTimeBoot: (target) => setOneTimeBoot(ctx, target),
    insertMedia: (imageUrl) => insertMedia(ctx, imageUrl),
    ejectMedia: () => ejectMedia(ctx),
    getInventory: () => getInventory(ctx),
    getBiosAttributes: () => getBiosAttributes(ctx),
    setBiosAttributes: (attrs) => setBiosAttributes(ctx, attrs),
    simpleUpdate: (imageUri) => simpleUpdate(ctx, imageUri),
    listVolumes: () => listVolumes(ctx),
    createVolume: (spec) => createVolume(ctx, spec),
    deleteVolume: (volumeUri) => deleteVolume(ctx, volumeUri),
    close: () => http.close(),
  };
}
