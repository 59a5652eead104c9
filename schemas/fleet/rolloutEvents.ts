import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { HostOutcome, RolloutHaltReason } from './rolloutWaves.ts';

const RolloutPlanOptions = z.object({
  canarySize: z.number().int(),
  wavePercent: z.number().int(),
  maxConsecutiveFailures: z.number().int(),
  waveTimeoutMs: z.number().int(),
});

/**
 * A rollout planned and started: its waves (wave 0 is the canary) and the digest of the plan (sha256 of the canonical
 * JSON of module, versions, waves and breaker: what an approver signs is what runs). No host is touched yet. Under an
 * approver quorum `approvalsRequired` is its threshold at the start and the rollout awaits that many approvals of this
 * digest before its first wave; 0 (no quorum, and every rollout before approvals existed) runs at once. Its approval
 * window closes at `approvalExpiresAt` (the quorum's `approvalTtlSeconds` after the start; null when none is needed).
 */
export const RolloutStarted = defineEvent(
  'RolloutStarted',
  z.object({
    rolloutId: z.string(),
    module: z.string(),
    fromVersion: z.string(),
    toVersion: z.string(),
    template: z.string().nullable(),
    waves: z.array(z.array(z.string())),
    options: RolloutPlanOptions,
    planDigest: z.string(),
    approvalsRequired: z.number().int().min(0),
    approvalExpiresAt: z.string().nullable(),
  }),
  {
    version: 3,
    upcasters: {
      // v1 was written before approvals existed: such a rollout ran at once.
      1: (data) => ({ ...(data as object), approvalsRequired: 0 }),
      // v2 was written before approvals expired: its request stays open until approved, rejected or aborted.
      2: (data) => ({ ...(data as object), approvalExpiresAt: null }),
    },
  },
);

/** One approver's verified signature over this rollout and its plan digest (each approver counts once). */
export const RolloutApprovalRecorded = defineEvent(
  'RolloutApprovalRecorded',
  z.object({ rolloutId: z.string(), approverId: z.string(), planDigest: z.string() }),
);

/** The approvals reached the threshold: the plan with this digest, and no other, runs; the canary may start. */
export const RolloutApproved = defineEvent('RolloutApproved', z.object({ rolloutId: z.string(), planDigest: z.string(), approvers: z.array(z.string()) }));

/** An approver's verified signature rejecting this rollout and its plan: the rollout ends, no host touched. */
export const RolloutRejected = defineEvent('RolloutRejected', z.object({ rolloutId: z.string(), approverId: z.string(), planDigest: z.string() }));

/** The approval window closed before the approvals reached the threshold: the rollout ends, no host touched. */
export const RolloutApprovalExpired = defineEvent('RolloutApprovalExpired', z.object({ rolloutId: z.string(), expiresAt: z.string() }));

/** The controller applies a wave: its hosts have until `deadline` to report the new version healthy. */
export const RolloutWaveStarted = defineEvent(
  'RolloutWaveStarted',
  z.object({ rolloutId: z.string(), wave: z.number().int(), hosts: z.array(z.string()), deadline: z.string() }),
);

/** A host's first report of the new version (later ones are redeliveries and append nothing). */
export const RolloutHostReported = defineEvent(
  'RolloutHostReported',
  z.object({ rolloutId: z.string(), host: z.string(), wave: z.number().int(), outcome: HostOutcome }),
);

/** The rollout stopped on a report: no wave starts until an operator continues, rolls back or aborts. */
export const RolloutHalted = defineEvent('RolloutHalted', z.object({ rolloutId: z.string(), reason: RolloutHaltReason, failed: z.array(z.string()) }));

export const RolloutPaused = defineEvent('RolloutPaused', z.object({ rolloutId: z.string() }));
export const RolloutResumed = defineEvent('RolloutResumed', z.object({ rolloutId: z.string() }));

/** An operator continued past a halt: `accepted` are the failed hosts the rollout goes on without. */
export const RolloutContinued = defineEvent('RolloutContinued', z.object({ rolloutId: z.string(), accepted: z.array(z.string()) }));

/** Rollback: `targets` (exactly the hosts that reported the new version applied) go back to `version`. */
export const RolloutRollbackStarted = defineEvent(
  'RolloutRollbackStarted',
  z.object({ rolloutId: z.string(), version: z.string(), targets: z.array(z.string()) }),
);

/** A rollback target's first report of the previous version. */
export const RolloutHostRestored = defineEvent('RolloutHostRestored', z.object({ rolloutId: z.string(), host: z.string(), outcome: HostOutcome }));

/** Every rollback target reported: `restored` runs the previous version healthy, `failed` did not say so. */
export const RolloutRolledBack = defineEvent(
  'RolloutRolledBack',
  z.object({ rolloutId: z.string(), restored: z.array(z.string()), failed: z.array(z.string()) }),
);

/** Stopped by an operator; hosts keep what they run. */
export const RolloutAborted = defineEvent('RolloutAborted', z.object({ rolloutId: z.string() }));

/** Every host of every wave reported the new version healthy (or was accepted failed by a continue). */
export const RolloutCompleted = defineEvent('RolloutCompleted', z.object({ rolloutId: z.string() }));

export const rolloutEvents = [
  RolloutStarted,
  RolloutApprovalRecorded,
  RolloutApproved,
  RolloutRejected,
  RolloutApprovalExpired,
  RolloutWaveStarted,
  RolloutHostReported,
  RolloutHalted,
  RolloutPaused,
  RolloutResumed,
  RolloutContinued,
  RolloutRollbackStarted,
  RolloutHostRestored,
  RolloutRolledBack,
  RolloutAborted,
  RolloutCompleted,
] as const;
export type RolloutEvent = EventOf<(typeof rolloutEvents)[number]>;
