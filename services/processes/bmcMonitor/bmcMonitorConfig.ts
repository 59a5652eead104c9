import { z } from 'zod';
import { loadEnvSettings } from '../../platform/envSettings.ts';

/** Settings of the `bmc-monitor` service, from the environment. */
export const BmcMonitorConfig = z.object({
  /** Pause between two passes over the fleet (`BC_BMC_PROBE_INTERVAL_MS`). */
  intervalMs: z.coerce.number().int().min(100).default(60_000),
  /** Failed reads in a row before a node goes into maintenance (`BC_BMC_FAILURES_BEFORE_MAINTENANCE`). */
  failuresBeforeMaintenance: z.coerce.number().int().min(1).default(3),
  /** How long one probe waits for its signed answer (`BC_BMC_PROBE_TIMEOUT_MS`). */
  probeTimeoutMs: z.coerce.number().int().min(100).default(30_000),
  /** Probes in flight at once (`BC_BMC_PROBE_CONCURRENCY`). */
  concurrency: z.coerce.number().int().min(1).default(16),
  /**
   * `direct`: the monitor sets and clears maintenance itself. `sensor`: it only publishes each node's probe record
   * (`bc.sig.obs.bmc.<nodeId>`) and the autonomy engine's maintenance lane acts on it (`BC_BMC_MONITOR_MODE`).
   */
  mode: z.enum(['direct', 'sensor']).default('direct'),
});
export type BmcMonitorConfig = z.infer<typeof BmcMonitorConfig>;

export function loadBmcMonitorConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<BmcMonitorConfig> = {}): BmcMonitorConfig {
  const names = {
    intervalMs: 'BC_BMC_PROBE_INTERVAL_MS',
    failuresBeforeMaintenance: 'BC_BMC_FAILURES_BEFORE_MAINTENANCE',
    probeTimeoutMs: 'BC_BMC_PROBE_TIMEOUT_MS',
    concurrency: 'BC_BMC_PROBE_CONCURRENCY',
    mode: 'BC_BMC_MONITOR_MODE',
  };
  return loadEnvSettings(BmcMonitorConfig, names, env, overrides);
}
