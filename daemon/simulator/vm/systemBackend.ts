/**
 * One computer system behind a BMC, as the Redfish face needs it. The mockup-tree simulator keeps this state in its
 * JSON tree; the VM backend keeps it in a QEMU process. (The BMC simulator's own per-system interface is being
 * restructured; `redfishAdapter.ts` is the one place that joins the two.)
 */
/** `PoweringOn` / `PoweringOff` while the host is on its way (a QEMU process starting, or ending), as DSP0268 allows. */
export type SystemPowerState = 'On' | 'Off' | 'PoweringOn' | 'PoweringOff';

/**
 * What a BMC shows of the host's resets besides PowerState (DSP0268 `LastResetTime`, `BootProgress`), from what the
 * host really did; a client tells a restart that happened from one that was ignored by it.
 */
export interface ResetEvidence {
  /** When the host last came out of reset (ISO 8601); null before its first power-on. */
  lastResetTime: string | null;
  /** The last boot progress the host reached that the BMC knows of, and when; null before its first power-on. */
  bootProgress: { lastState: 'None' | 'PrimaryProcessorInitializationStarted'; lastStateTime: string } | null;
}

/** DSP0268 ResetType values the backend acts on. */
export const SystemResetTypes = ['On', 'ForceOff', 'GracefulShutdown', 'ForceRestart', 'GracefulRestart', 'PowerCycle', 'Nmi'] as const;
export type SystemResetType = (typeof SystemResetTypes)[number];

export const BootOverrideTargets = ['None', 'Pxe', 'Cd', 'Hdd'] as const;
export type BootOverrideTarget = (typeof BootOverrideTargets)[number];
export const BootOverrideEnabledValues = ['Disabled', 'Once', 'Continuous'] as const;
export type BootOverrideEnabled = (typeof BootOverrideEnabledValues)[number];

export interface BootOverride {
  target: BootOverrideTarget;
  enabled: BootOverrideEnabled;
}

export interface SystemInventory {
  uuid: string;
  cpus: number;
  memoryMiB: number;
  nics: readonly { id: string; mac: string }[];
  disks: readonly { id: string; serial: string; sizeBytes: number }[];
}

export interface VirtualMediaState {
  /** The URL the client inserted (what Redfish reports as `Image`), or null. */
  image: string | null;
  inserted: boolean;
}

/** A request the system refuses in its current state (Redfish answers 409/400 with a message), never a crash. */
export class SystemRefusal extends Error {
  override name = 'SystemRefusal';
  constructor(
    readonly code: 'INVALID_IN_STATE' | 'UNSUPPORTED' | 'MEDIA_UNAVAILABLE',
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export interface SystemBackend {
  readonly id: string;
  powerState(): SystemPowerState;
  resetEvidence(): ResetEvidence;
  /** Acts on the system; `SystemRefusal('INVALID_IN_STATE')` for e.g. ForceOff of a system that is off. */
  reset(type: SystemResetType): Promise<void>;
  bootOverride(): BootOverride;
  setBootOverride(override: Partial<BootOverride>): void;
  media(): VirtualMediaState;
  /** Fetches the image from `url` (as a BMC does) and puts it in the CD drive. */
  insertMedia(url: string): Promise<void>;
  ejectMedia(): Promise<void>;
  inventory(): SystemInventory;
  close(): Promise<void>;
}
