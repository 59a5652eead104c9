import { z } from 'zod';
import { loadEnvSettings } from '../../platform/envSettings.ts';

/** The `rollout-controller`'s settings, read from the environment. */
export const RolloutControllerConfig = z.object({
  /** How often wave and rollback deadlines are read: a host silent past its wave's deadline counts timed out then. */
  tickMs: z.coerce.number().int().min(10).default(5_000),
  /** How long a host gives each probe of an applied module. */
  probeTimeoutMs: z.coerce.number().int().min(100).max(600_000).default(30_000),
});
export type RolloutControllerConfig = z.infer<typeof RolloutControllerConfig>;

export function loadRolloutControllerConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<RolloutControllerConfig> = {}): RolloutControllerConfig {
  const names = { tickMs: 'BC_ROLLOUT_TICK_MS', probeTimeoutMs: 'BC_ROLLOUT_PROBE_TIMEOUT_MS' };
  return loadEnvSettings(RolloutControllerConfig, names, env, overrides);
}
