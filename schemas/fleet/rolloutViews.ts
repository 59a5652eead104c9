import { z } from 'zod';
import { aggregateRef } from '../aggregateRef.ts';
import { HostOutcome, RolloutHaltReason } from './rolloutWaves.ts';

/**
 * Where a rollout is: `awaiting-approval` (under an approver quorum: no wave starts until enough approvers signed its
 * plan digest), `running` (waves start as the previous one reports healthy), `paused` (no wave starts; reports of
 * the wave in flight still count), `halted` (a failure stopped it: continue, rollback or abort), `rolling-back` (the
 * hosts that took the new version go back), and the ends: `completed`, `rolled-back`, `aborted`, and for a rollout that
 * never ran: `rejected` (an approver signed its rejection) and `approval-expired` (its approval window closed first).
 */
export const RolloutStatus = z.enum([
  'awaiting-approval',
  'running',
  'paused',
  'halted',
  'rolling-back',
  'completed',
  'rolled-back',
  'aborted',
  'rejected',
  'approval-expired',
]);
export type RolloutStatus = z.infer<typeof RolloutStatus>;

/**
 * What another fleet aggregate's decider may read of a module's rollouts (`fleet.applyPlan`): the current rollout's
 * status and the hosts of its waves (the fold stays in `services/fleet/rollout/rollout.ts`).
 */
export const rolloutRef = aggregateRef<{
  readonly current: {
    readonly rolloutId: string;
    readonly status: RolloutStatus;
    readonly progress: { readonly waves: readonly (readonly string[])[] };
  } | null;
}>('fleet', 'rollout');

/** The statuses a rollout does not leave; any other holds its module (one rollout per module at a time). */
export const endedRolloutStatuses: ReadonlySet<RolloutStatus> = new Set(['completed', 'rolled-back', 'aborted', 'rejected', 'approval-expired']);

/** One host of a rollout: its wave, what it reported of the new version and, in a rollback, of the previous one. */
export const RolloutHostView = z.object({
  host: z.string(),
  wave: z.number().int(),
  outcome: HostOutcome.nullable(),
  restored: HostOutcome.nullable(),
});
export type RolloutHostView = z.infer<typeof RolloutHostView>;

/** A rollout as the `modules` read model serves it (`GET /v1/rollouts`: without `hosts`). */
export const RolloutView = z.object({
  rolloutId: z.string(),
  module: z.string(),
  fromVersion: z.string(),
  toVersion: z.string(),
  template: z.string().nullable(),
  status: RolloutStatus,
  planDigest: z.string(),
  /** Approvals the start needed (the quorum's threshold then; 0: none) and the approvers who signed so far. */
  approvalsRequired: z.number().int(),
  approvals: z.array(z.string()),
  /** When its approval window closes (null: it needed no approval); past it the rollout ends `approval-expired`. */
  approvalExpiresAt: z.string().nullable(),
  /** The approver whose signed rejection ended it (status `rejected`); null otherwise. */
  rejectedBy: z.string().nullable(),
  options: z.object({ canarySize: z.number().int(), wavePercent: z.number().int(), maxConsecutiveFailures: z.number().int(), waveTimeoutMs: z.number().int() }),
  waveCount: z.number().int(),
  startedWaves: z.number().int(),
  hostCount: z.number().int(),
  halt: z.object({ reason: RolloutHaltReason, failed: z.array(z.string()) }).nullable(),
  rollbackTargets: z.array(z.string()).nullable(),
  startedAt: z.string(),
  startedBy: z.string(),
  updatedAt: z.string(),
});
export type RolloutView = z.infer<typeof RolloutView>;

/** One rollout with its waves and each host's outcome. */
export const RolloutDetailView = RolloutView.extend({
  waves: z.array(z.object({ wave: z.number().int(), deadline: z.string().nullable(), hosts: z.array(RolloutHostView) })),
});
export type RolloutDetailView = z.infer<typeof RolloutDetailView>;
