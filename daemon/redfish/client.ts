import { getBiosAttributes, setBiosAttributes, type BiosAttributes, type BiosWriteResult } from './bios.ts';
import { applyBiosSettings, type BiosApplyResult } from './biosApply.ts';
import { clearBootOverride, setOneTimeBoot, type BootClearResult, type BootMode, type BootOverrideResult, type OneTimeBootTarget } from './boot.ts';
import type { ClientContext, RedfishTiming } from './clientContext.ts';
import { Discovery } from './discovery.ts';
import { RedfishError } from './errors.ts';
import { createRedfishHttp, type RedfishAuthMode } from './http.ts';
import type { Inventory } from '../../schemas/metal/inventory.ts';
import { getPowerState, setPower, type PowerAction, type PowerState, type SetPowerResult } from './power.ts';
import { applyRaid, type RaidApplyResult, type RaidPlan } from './raidApply.ts';
import { getInventory } from './readInventory.ts';
import { retryingTransient } from './transient.ts';
import { createTransport, type RedfishTlsOptions } from './transport.ts';
import { simpleUpdate, type UpdateResult } from './update.ts';
import { ejectMedia, insertMedia, type EjectResult, type MediaResult } from './virtualMedia.ts';
import { createVolume, deleteVolume, listVolumes, type CreateVolumeSpec, type VolumeInfo } from './volumes.ts';

export interface RedfishClientOptions {
  /**
   * The BMC (`https://10.0.0.5`, `…/redfish/v1`) or one of its systems (`https://10.0.0.5/redfish/v1/Systems/2`):
   * the client drives that system, or the only one the BMC serves.
   */
  baseUrl: string;
  username: string;
  password: string;
  /** Default `auto`: a session where the BMC offers one, Basic otherwise or when the login is refused. */
  auth?: RedfishAuthMode;
  tls?: RedfishTlsOptions;
  /** Per HTTP request. */
  timeoutMs: number;
  /** Wait budgets for state changes that the BMC confirms only by polling. */
  timing?: Partial<RedfishTiming>;
  /** The boot mode for boot overrides; default: what the BIOS reports (see `boot.ts`). */
  bootMode?: BootMode;
}

export interface RedfishClient {
  getPowerState(): Promise<PowerState>;
  setPower(action: PowerAction): Promise<SetPowerResult>;
  setOneTimeBoot(target: OneTimeBootTarget, mode?: BootMode): Promise<BootOverrideResult>;
  /** Sets the boot override back to none (a `Continuous` one would boot the same way at every restart). */
  clearBootOverride(): Promise<BootClearResult>;
  insertMedia(imageUrl: string): Promise<MediaResult>;
  ejectMedia(): Promise<EjectResult>;
  getInventory(): Promise<Inventory>;
  getBiosAttributes(): Promise<BiosAttributes>;
  setBiosAttributes(attrs: BiosAttributes): Promise<BiosWriteResult>;
  /** Writes pending BIOS settings, resets the machine and verifies them (see `biosApply.ts`). */
  applyBiosSettings(attrs: BiosAttributes): Promise<BiosApplyResult>;
  simpleUpdate(imageUri: string): Promise<UpdateResult>;
  listVolumes(): Promise<VolumeInfo[]>;
  createVolume(spec: CreateVolumeSpec): Promise<VolumeInfo>;
  deleteVolume(volumeUri: string): Promise<void>;
  /** Deletes and creates volumes idempotently (see `raidApply.ts`). */
  applyRaid(plan: RaidPlan): Promise<RaidApplyResult>;
  /** Ends the Redfish session (session auth); BMCs have only a handful of session slots. */
  close(): Promise<void>;
}

const defaultTiming: RedfishTiming = {
  pollIntervalMs: 1_000,
  powerTimeoutMs: 5 * 60_000,
  mediaTimeoutMs: 2 * 60_000,
  taskTimeoutMs: 60 * 60_000,
  resetObserveMs: 60_000,
  bootVerifyMs: 30_000,
  updateVerifyMs: 60_000,
  transientRetries: 4,
  maxRetryAfterMs: 30_000,
};

/** `/redfish/v1/Systems/<id>` when the address names a system; anything else in the path is the service itself. */
function systemUriOf(origin: URL): string | undefined {
  return /^\/redfish\/v1\/Systems\/[^/]+\/?$/i.test(origin.pathname) ? origin.pathname.replace(/\/+$/, '') : undefined;
}

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
  const timing = { ...defaultTiming, ...definedOnly(options.timing ?? {}) };
  const transport = retryingTransient(createTransport({ origin, timeoutMs: options.timeoutMs, ...(options.tls ? { tls: options.tls } : {}) }), {
    retries: timing.transientRetries,
    maxDelayMs: timing.maxRetryAfterMs,
  });
  const http = createRedfishHttp(transport, { username: options.username, password: options.password, auth: options.auth ?? 'auto' });
  const ctx: ClientContext = { http, discovery: new Discovery(http, systemUriOf(origin)), timing, bootMode: options.bootMode };

  return {
    getPowerState: () => getPowerState(ctx),
    setPower: (action) => setPower(ctx, action),
    setOneTimeBoot: (target, mode) => setOneTimeBoot(ctx, target, mode),
    clearBootOverride: () => clearBootOverride(ctx),
    insertMedia: (imageUrl) => insertMedia(ctx, imageUrl),
    ejectMedia: () => ejectMedia(ctx),
    getInventory: () => getInventory(ctx),
    getBiosAttributes: () => getBiosAttributes(ctx),
    setBiosAttributes: (attrs) => setBiosAttributes(ctx, attrs),
    applyBiosSettings: (attrs) => applyBiosSettings(ctx, attrs),
    simpleUpdate: (imageUri) => simpleUpdate(ctx, imageUri),
    listVolumes: () => listVolumes(ctx),
    createVolume: (spec) => createVolume(ctx, spec),
    deleteVolume: (volumeUri) => deleteVolume(ctx, volumeUri),
    applyRaid: (plan) => applyRaid(ctx, plan),
    close: () => http.close(),
  };
}
