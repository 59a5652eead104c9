/**
 * How one simulated BMC departs from the textbook: each field is a behaviour real BMCs and common emulators show, so
 * the Redfish client has a test for each. Every default is the plain DSP0266 behaviour the mockup tree implies.
 */
export interface BmcQuirks {
  /** `Vendor` in the service root (Redfish 1.5+), e.g. `AMI`; default: what the tree says. */
  vendor: string | undefined;
  /**
   * `offered`: a SessionService. `absent`: none (the root lists none, nothing answers there). `notFound`: the root lists
   * one but the login answers 404 (emulators that stub it). `refused`: the login answers 401 even to good credentials.
   */
  sessions: 'offered' | 'absent' | 'notFound' | 'refused';
  /**
   * `exact`: a `Once` override reads back `Once`. `continuous`: it reads back `Continuous` (and is kept after a boot).
   * `deferred`: the PATCH answers 202 with a task and the override shows when the task completes. `ignored`: 200, and
   * nothing changes.
   */
  bootOverride: 'exact' | 'continuous' | 'deferred' | 'ignored';
  /** `readOnly`: a PATCH that writes BootSourceOverrideMode is refused (400 PropertyNotWritable). */
  bootMode: 'writable' | 'readOnly';
  /**
   * `visible`: `PoweringOn` through a restart, and `LastResetTime` set. `silent`: no transitional state, only
   * `LastResetTime`. `traceless`: neither. `ignored`: restart types are answered 200 and do nothing.
   */
  restart: 'visible' | 'silent' | 'traceless' | 'ignored';
  /** `none`: virtual media slots list no MediaTypes (AMI MegaRAC). */
  mediaTypes: 'tree' | 'none';
  /** `system`: virtual media sits under each ComputerSystem (ComputerSystem ≥ 1.13) instead of the manager. */
  mediaUnder: 'tree' | 'system';
  /** `imageOnly`: an insert (action or PATCH) that carries `Inserted` or `WriteProtected` is refused with 400. */
  insertFlags: 'accepted' | 'imageOnly';
  /**
   * `disabled`: remote media starts off, as AMI MegaRAC ships: the media collections list no slots (the slots answer 404)
   * until the manager's OEM action `#VirtualMedia.EnableRMedia` is posted with `RMediaState: Enable`. Trees without the
   * action get it as the AMI tree declares it (`remoteMedia.ts`).
   */
  remoteMedia: 'enabled' | 'disabled';
  /** Every action (reset, media, volume create and delete) answers 202 with a task monitor and happens when the task ends. */
  asyncActions: boolean;
  /** `requiredUnpublished`: a PATCH without If-Match answers 428, and no ETag is ever published (header or `@odata.etag`). */
  ifMatch: 'optional' | 'requiredUnpublished';
  /** Every `every`-th request is answered `status` with `Retry-After: retryAfterSeconds`, without acting on it. */
  throttle: { status: 429 | 503; every: number; retryAfterSeconds: number } | undefined;
  /** A second, plain-http listener (`redirectUrl`) answers every request with a 308 to the https one (needs `tls`). */
  httpsRedirect: boolean;
  /** Each EthernetInterface is listed twice, under a second id with the same MAC. */
  duplicateMacs: boolean;
  /** `dropped`: pending BIOS settings are accepted and then lost at the reset (firmware that rejects them in POST). */
  biosSettings: 'applied' | 'dropped';
}

export const defaultQuirks: BmcQuirks = {
  vendor: undefined,
  sessions: 'offered',
  bootOverride: 'exact',
  bootMode: 'writable',
  restart: 'visible',
  mediaTypes: 'tree',
  mediaUnder: 'tree',
  insertFlags: 'accepted',
  remoteMedia: 'enabled',
  asyncActions: false,
  ifMatch: 'optional',
  throttle: undefined,
  httpsRedirect: false,
  duplicateMacs: false,
  biosSettings: 'applied',
};

/** Named sets of quirks: the BMC families and emulators the client is known to meet. */
export const BmcDialects = {
  standard: {},
  /** AMI MegaRAC (ASRock Rack, Gigabyte): untyped media slots, remote media off by default, Image-only inserts, sticky overrides. */
  'ami-megarac': { vendor: 'AMI', mediaTypes: 'none', remoteMedia: 'disabled', insertFlags: 'imageOnly', bootOverride: 'continuous' },
  /** Emulators and BMCs with the SessionService switched off: HTTP Basic only. */
  'no-sessions': { sessions: 'absent' },
  /** Firmware that queues everything: 202 and a task for every action and override, restarts without a visible transition. */
  deferred: { asyncActions: true, bootOverride: 'deferred', restart: 'silent' },
  /** A busy BMC: every other request answered 503 with Retry-After, and If-Match required without ETags. */
  busy: { throttle: { status: 503, every: 2, retryAfterSeconds: 0 }, ifMatch: 'requiredUnpublished' },
} as const satisfies Record<string, Partial<BmcQuirks>>;
export type BmcDialectName = keyof typeof BmcDialects;

/** A dialect by name, or quirks given one by one, on top of the defaults. */
export function quirksOf(dialect: BmcDialectName | Partial<BmcQuirks> | undefined): BmcQuirks {
  const chosen = typeof dialect === 'string' ? BmcDialects[dialect] : (dialect ?? {});
  return { ...defaultQuirks, ...chosen };
}
