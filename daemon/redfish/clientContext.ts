import type { Discovery } from './discovery.ts';
import type { RedfishHttp } from './http.ts';

/** The firmware boot mode a boot override asks for (`BootSourceOverrideMode`). */
export type BootMode = 'UEFI' | 'Legacy';

export interface RedfishTiming {
  pollIntervalMs: number;
  powerTimeoutMs: number;
  mediaTimeoutMs: number;
  taskTimeoutMs: number;
  /** How long a restart may go unseen (no power transition, no reset evidence) before it counts as ignored. */
  resetObserveMs: number;
  /** How long an accepted boot override may take to show its target (BMCs that arm it later). */
  bootVerifyMs: number;
  /** How long a firmware update the BMC answered without a task may take to show a new version. */
  updateVerifyMs: number;
  /** Further attempts after a 429 or 503 answer. */
  transientRetries: number;
  /** The longest wait a `Retry-After` is honoured for. */
  maxRetryAfterMs: number;
}

/** What every operation module needs: the authenticated HTTP layer, link discovery, the wait budgets and node options. */
export interface ClientContext {
  http: RedfishHttp;
  discovery: Discovery;
  timing: RedfishTiming;
  /** The node's boot mode, when its enrolment sets one. */
  bootMode: BootMode | undefined;
}
