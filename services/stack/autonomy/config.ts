import { z } from 'zod';
import { BUDGET_WINDOW_MAX_MS } from '../../../schemas/autonomy/budgetCommands.ts';
import { loadEnvSettings } from '../../platform/envSettings.ts';

const csv = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : v,
  z.array(z.string()),
);

/** Settings of `fleet-sensors` and `autonomy-engine`, from the environment. */
export const AutonomyConfig = z.object({
  /** Pause between two sensor passes (`BC_SENSOR_TICK_MS`). */
  tickMs: z.coerce.number().int().min(50).default(60_000),
  /** Failed BMC reads in a row before a node counts as unreachable (`BC_BMC_FAILURES_BEFORE_MAINTENANCE`): the monitor's hysteresis. */
  bmcFailuresBeforeSignal: z.coerce.number().int().min(1).default(3),
  /** A running step is overdue after this many times its nominal timeout (`BC_SENSOR_OVERDUE_FACTOR`). */
  overdueFactor: z.coerce.number().min(1).default(3),
  /** The step timeout for workflow rows projected before the read model kept each step's own (`BC_SENSOR_STEP_TIMEOUT_MS`). */
  stepTimeoutMs: z.coerce.number().int().min(1).default(3_600_000),
  /** Work waiting for capacity this long is an old queue (`BC_SENSOR_STALE_QUEUE_MS`). */
  staleQueueMs: z.coerce
    .number()
    .int()
    .min(1)
    .default(30 * 60_000),
  /** Agent keys older than this should rotate (`BC_AGENT_KEY_ROTATION_MS`). */
  keyRotationAgeMs: z.coerce
    .number()
    .int()
    .min(1)
    .default(90 * 86_400_000),
  /** A key rotation asked for this long ago and not carried out is stalled (`BC_AGENT_KEY_ROTATION_STALL_MS`). */
  keyRotationStallMs: z.coerce
    .number()
    .int()
    .min(1)
    .default(30 * 60_000),
  /** A deployed host's `bcd node` silent this long (since the deploy at the earliest) is `host-silent` (`BC_HOST_SILENT_MS`). */
  hostSilentMs: z.coerce
    .number()
    .int()
    .min(1)
    .default(3 * 60_000),
  /**
   * How long a host has to apply and report its pinned module plan before a pinned module it reports at another
   * version is `module-drift` and one it does not report is `module-never-reported` (`BC_MODULE_REPORT_GRACE_MS`).
   */
  moduleReportGraceMs: z.coerce
    .number()
    .int()
    .min(1)
    .default(10 * 60_000),
  /** After a remediation started, how long before its outcome is judged (`BC_AUTONOMY_SETTLE_MS`). */
  settleMs: z.coerce.number().int().min(0).default(90_000),
  /**
   * Remediations per owner (`BC_AUTONOMY_BUDGET`) in any span of `budgetWindowMs` (`BC_AUTONOMY_BUDGET_WINDOW_MS`, a
   * sliding window of at most 7 days).
   */
  budget: z.coerce.number().int().min(0).default(20),
  budgetWindowMs: z.coerce.number().int().min(1_000).max(BUDGET_WINDOW_MAX_MS).default(3_600_000),
  /** Node ids of the control plane's own machines (`BC_CONTROL_PLANE_NODES`): never remediated. */
  controlPlaneNodes: csv.default([]),
});
export type AutonomyConfig = z.infer<typeof AutonomyConfig>;

export function loadAutonomyConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<AutonomyConfig> = {}): AutonomyConfig {
  const names = {
    tickMs: 'BC_SENSOR_TICK_MS',
    bmcFailuresBeforeSignal: 'BC_BMC_FAILURES_BEFORE_MAINTENANCE',
    overdueFactor: 'BC_SENSOR_OVERDUE_FACTOR',
    stepTimeoutMs: 'BC_SENSOR_STEP_TIMEOUT_MS',
    staleQueueMs: 'BC_SENSOR_STALE_QUEUE_MS',
    keyRotationAgeMs: 'BC_AGENT_KEY_ROTATION_MS',
    keyRotationStallMs: 'BC_AGENT_KEY_ROTATION_STALL_MS',
    hostSilentMs: 'BC_HOST_SILENT_MS',
    moduleReportGraceMs: 'BC_MODULE_REPORT_GRACE_MS',
    settleMs: 'BC_AUTONOMY_SETTLE_MS',
    budget: 'BC_AUTONOMY_BUDGET',
    budgetWindowMs: 'BC_AUTONOMY_BUDGET_WINDOW_MS',
    controlPlaneNodes: 'BC_CONTROL_PLANE_NODES',
  };
  return loadEnvSettings(AutonomyConfig, names, env, overrides);
}
