import { z } from 'zod';

/** How a rollout cuts its hosts into waves: the canary first, then waves of a share of the hosts left after it. */
export const WavePlanOptions = z
  .object({
    /** Hosts in the canary wave (at least one: a rollout always starts with a canary). */
    canarySize: z.number().int().min(1),
    /** Each later wave: this percentage of the hosts left after the canary, rounded up. */
    wavePercent: z.number().int().min(1).max(100),
  })
  .strict();
export type WavePlanOptions = z.infer<typeof WavePlanOptions>;

/** Waves in the order they run; wave 0 is the canary. */
export type Waves = readonly (readonly string[])[];

/**
 * What a host reported for the new version: `healthy` (applied, probes pass), `failed` (applied, a probe failed),
 * `timed-out` (nothing within the wave's timeout: never read as healthy).
 */
export const HostOutcome = z.enum(['healthy', 'failed', 'timed-out']);
export type HostOutcome = z.infer<typeof HostOutcome>;

/** Why a rollout stopped: the canary failed, the breaker tripped, or a wave ended with a failure below the breaker. */
export const RolloutHaltReason = z.enum(['canary_failed', 'breaker_tripped', 'wave_failed']);
export type RolloutHaltReason = z.infer<typeof RolloutHaltReason>;

/** What the rollout controller does next. */
export type RolloutDecision =
  | { action: 'start_wave'; wave: number; hosts: readonly string[] }
  | { action: 'wait'; wave: number; pending: readonly string[] }
  | { action: 'halt'; reason: RolloutHaltReason; failed: readonly string[] }
  | { action: 'complete' };
