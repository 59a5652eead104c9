import { z } from 'zod';
import { Ed25519Signature } from '../ed25519.ts';
import { ResourceId } from '../ids.ts';
import { ModuleName, ModuleVersion, TemplateName } from './closure.ts';
import { HostOutcome } from './rolloutWaves.ts';

/** The most hosts one rollout moves (the bench's fleet is 1,000). */
export const ROLLOUT_HOSTS_MAX = 5_000;

/**
 * A rollout's id: `<module>-<n>`, the module's n-th rollout. A module's rollouts share one aggregate
 * (`bc.evt.fleet.rollout.<module>`), which is how only one of them runs at a time.
 */
export const RolloutId = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}-[1-9][0-9]{0,8}$/, 'must be <module>-<n>');
export type RolloutId = z.infer<typeof RolloutId>;

/** The module a rollout id names (its id up to the last `-`). */
export const moduleOfRollout = (rolloutId: string): string => rolloutId.slice(0, rolloutId.lastIndexOf('-'));

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256');

/** How a rollout runs: its waves (canary, then a share of the rest) and when it halts. */
export const RolloutOptions = z
  .object({
    /** Hosts in the canary wave; default 1. */
    canarySize: z.number().int().min(1).max(ROLLOUT_HOSTS_MAX).default(1),
    /** Each later wave: this percentage of the hosts left after the canary, rounded up; default 10. */
    wavePercent: z.number().int().min(1).max(100).default(10),
    /** Failed or timed-out reports in a row that trip the breaker; default 3. */
    maxConsecutiveFailures: z.number().int().min(1).max(ROLLOUT_HOSTS_MAX).default(3),
    /** How long a wave's hosts have to report the new version healthy; a host silent past it is reported timed-out. Default 10 min. */
    waveTimeoutMs: z.number().int().min(1_000).max(86_400_000).default(600_000),
  })
  .strict();
export type RolloutOptions = z.infer<typeof RolloutOptions>;

/** What a rollout moves: one module, from the version its hosts' plans pin to another published one. */
const RolloutTarget = z.object({
  module: ModuleName,
  fromVersion: ModuleVersion,
  toVersion: ModuleVersion,
  /** Only hosts assigned this template (informational scope; a module has one rollout at a time whatever its scope). */
  template: TemplateName.optional(),
  /** The digest an approver signed (`POST /v1/rollouts/plan`): the start is refused unless the plan is that one. */
  planDigest: Sha256.optional(),
});

/**
 * `fleet.startRollout`: move `hosts` (each must have a plan that pins `module` at `fromVersion`) to `toVersion`, wave by
 * wave. Refused with ROLLOUT_IN_PROGRESS while another rollout of the module has not ended.
 */
export const StartRollout = RolloutTarget.extend({ hosts: z.array(ResourceId).min(1).max(ROLLOUT_HOSTS_MAX) })
  .merge(RolloutOptions)
  .strict()
  .refine((c) => c.fromVersion !== c.toVersion, { message: 'fromVersion and toVersion are the same', path: ['toVersion'] });
export type StartRollout = z.infer<typeof StartRollout>;

/**
 * `POST /v1/rollouts` and `POST /v1/rollouts/plan`: `hosts` defaults to every host whose plan pins the module at
 * `fromVersion` (of `template`, when given) in the `modules` read model.
 */
export const StartRolloutRequest = RolloutTarget.extend({ hosts: z.array(ResourceId).min(1).max(ROLLOUT_HOSTS_MAX).optional() })
  .merge(RolloutOptions)
  .strict();
export type StartRolloutRequest = z.infer<typeof StartRolloutRequest>;

/** `fleet.pauseRollout`, `resumeRollout`, `continueRollout`, `rollbackRollout`, `abortRollout`: the rollout they act on. */
export const RolloutCommand = z.object({ rolloutId: RolloutId }).strict();
export type RolloutCommand = z.infer<typeof RolloutCommand>;

/**
 * `fleet.approveRollout` (approvers, under a quorum): one approver's signature over `rolloutApprovalText('approve',
 * { rolloutId, planDigest })`. `planDigest` is the digest the approver read (`rollouts show`, `POST /v1/rollouts/plan`):
 * the rollout's own must be that one, or nothing is recorded (PLAN_DIGEST_MISMATCH).
 */
export const ApproveRollout = z.object({ rolloutId: RolloutId, planDigest: Sha256, approverId: ResourceId, signature: Ed25519Signature }).strict();
export type ApproveRollout = z.infer<typeof ApproveRollout>;

/**
 * `fleet.rejectRollout` (approvers): one approver's signature over `rolloutApprovalText('reject', { rolloutId,
 * planDigest })`; it ends a rollout awaiting approval (`rejected`), whatever the others signed.
 */
export const RejectRollout = ApproveRollout;
export type RejectRollout = z.infer<typeof RejectRollout>;

/** `fleet.startWave` (the rollout controller): wave `wave` is being applied; refused unless it is next and may start. */
export const StartWave = z.object({ rolloutId: RolloutId, wave: z.number().int().min(0) }).strict();
export type StartWave = z.infer<typeof StartWave>;

/** `fleet.recordHostOutcome` (the rollout controller): what a host of a started wave reported for the new version. */
export const RecordHostOutcome = z.object({ rolloutId: RolloutId, host: ResourceId, outcome: HostOutcome }).strict();
export type RecordHostOutcome = z.infer<typeof RecordHostOutcome>;

/** `fleet.recordHostRestored` (the rollout controller): what a rollback target reported for the previous version. */
export const RecordHostRestored = RecordHostOutcome;
export type RecordHostRestored = z.infer<typeof RecordHostRestored>;
