import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../schemas/canonicalJson.ts';
import type { RolloutOptions } from '../../../schemas/fleet/rolloutCommands.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import type { RolloutRun, RolloutState } from './rollout.ts';
import { planWaves } from './waves.ts';

/** What a rollout is planned from: the module, the two versions, the hosts and the options. */
export interface RolloutPlanInput extends RolloutOptions {
  module: string;
  fromVersion: string;
  toVersion: string;
  hosts: readonly string[];
}

/** The waves a rollout runs and the digest of its plan. */
export interface RolloutPlan {
  waves: string[][];
  planDigest: string;
}

/**
 * The plan and its digest: sha256 (hex) of the canonical JSON of the module, both versions, the waves and the breaker
 * (threshold and wave timeout). The waves are a pure function of the hosts and options, so a plan an approver read
 * (`POST /v1/rollouts/plan`) is the one `fleet.startRollout` starts, or the start is refused (PLAN_DIGEST_MISMATCH).
 */
export function planRollout(input: RolloutPlanInput): RolloutPlan {
  const waves = planWaves(input.hosts, input);
  const signed = {
    module: input.module,
    fromVersion: input.fromVersion,
    toVersion: input.toVersion,
    waves,
    maxConsecutiveFailures: input.maxConsecutiveFailures,
    waveTimeoutMs: input.waveTimeoutMs,
  };
  return { waves, planDigest: createHash('sha256').update(canonicalJson(signed)).digest('hex') };
}

/** The id of a module's next rollout. */
export const nextRolloutId = (module: string, state: RolloutState): string => `${module}-${state.count + 1}`;

/**
 * The rollout a command names: the module's current one. An earlier rollout of the module has ended (only one runs at a
 * time), which `ended` answers; an id the module never had is NOT_FOUND.
 */
export function runOf(state: RolloutState, rolloutId: string): { run: RolloutRun } | { ended: true } {
  const n = Number(rolloutId.slice(rolloutId.lastIndexOf('-') + 1));
  if (state.current !== null && state.current.rolloutId === rolloutId) return { run: state.current };
  if (n < state.count) return { ended: true };
  throw new DomainError('NOT_FOUND', `rollout ${rolloutId} does not exist`);
}
