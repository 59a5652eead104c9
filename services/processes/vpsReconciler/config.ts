import { z } from 'zod';
import { loadEnvSettings } from '../../platform/envSettings.ts';

/** The `vps-reconciler`'s settings, read from the environment. */
export const ReconcilerConfig = z.object({
  /** How often instances not yet where their tenant wants them are looked at again (provisioning → running). */
  resyncMs: z.coerce.number().int().min(10).default(2_000),
  /** Provider calls under way at once, over all instances: a resync of thousands must not open thousands of sockets. */
  concurrency: z.coerce.number().int().min(1).default(64),
  /** First wait after a provider stayed unavailable through its own retries; doubles per failure up to `maxBackoffMs`. */
  backoffMs: z.coerce.number().int().min(1).default(1_000),
  maxBackoffMs: z.coerce.number().int().min(1).default(60_000),
  /** Metal pools: an `instance.apply`/`instance.remove` whose effect no heartbeat of its host showed is sent again after this. */
  hostResendMs: z.coerce.number().int().min(100).default(30_000),
  /**
   * Metal pools: how long an instance no node takes is asked about again before it ends in `error` (a read model behind,
   * a host not heard yet since this process started, capacity being freed).
   */
  placementWaitMs: z.coerce.number().int().min(0).default(60_000),
  /**
   * Warm pools: a deployed host whose `bcd node` this process has not heard for this long is lost, and its slots are
   * reaped and placed elsewhere (the same setting, and meaning, as the `host-silent` sensor's).
   */
  hostSilentMs: z.coerce
    .number()
    .int()
    .min(1)
    .default(3 * 60_000),
});
export type ReconcilerConfig = z.infer<typeof ReconcilerConfig>;

export function loadReconcilerConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<ReconcilerConfig> = {}): ReconcilerConfig {
  const names = {
    resyncMs: 'BC_VPS_RESYNC_MS',
    concurrency: 'BC_VPS_RECONCILER_CONCURRENCY',
    backoffMs: 'BC_VPS_BACKOFF_MS',
    maxBackoffMs: 'BC_VPS_MAX_BACKOFF_MS',
    hostResendMs: 'BC_VPS_HOST_RESEND_MS',
    placementWaitMs: 'BC_VPS_PLACEMENT_WAIT_MS',
    hostSilentMs: 'BC_HOST_SILENT_MS',
  };
  return loadEnvSettings(ReconcilerConfig, names, env, overrides);
}
