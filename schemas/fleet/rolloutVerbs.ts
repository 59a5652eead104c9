import { z } from 'zod';
import type { RolloutStatus } from './rolloutViews.ts';

/** An operator's verb on a rollout: the last segment of `POST /v1/rollouts/:rolloutId/:verb`. */
export const RolloutVerb = z.enum(['pause', 'resume', 'continue', 'rollback', 'abort']);
export type RolloutVerb = z.infer<typeof RolloutVerb>;

/**
 * The statuses each verb acts from: the deciders (`services/fleet/rollout/operatorCommands.ts`) refuse it anywhere
 * else but where it is already done, and the console offers it only here. One rule for both, so the console never
 * offers what the API refuses for the status alone.
 */
export const rolloutVerbFrom: Readonly<Record<RolloutVerb, readonly RolloutStatus[]>> = {
  pause: ['running'],
  resume: ['paused'],
  continue: ['halted'],
  rollback: ['halted', 'paused'],
  abort: ['awaiting-approval', 'running', 'paused', 'halted', 'rolling-back'],
};
