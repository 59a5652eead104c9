import { z } from 'zod';
import { Ed25519Signature } from '../ed25519.ts';
import { RemediationPlan } from './plan.ts';
import { Category, PolicyDeclaration } from './policies.ts';
import { NaturalKey, Signal } from './signals.ts';

export const DecisionId = z.string().regex(/^dec-[0-9a-f]{24}$/);
/** A decision's episode: 1 for its first request, one more after each cooldown. */
export const Episode = z.number().int().positive();

/** `autonomy.openDecision` (engine): a signal bound to a category, with the declared policy and the resolved plan. */
export const OpenDecision = z
  .object({ category: Category, key: NaturalKey, passId: z.string().max(64), signal: Signal, policy: PolicyDeclaration, plan: RemediationPlan })
  .strict();
export type OpenDecision = z.infer<typeof OpenDecision>;

/**
 * `autonomy.approve` (API: approver tokens; admin tokens only while no quorum is set): approves the pending plan. A
 * signature, required with an approver quorum (`pki.setApprovers`), is over this decision, episode, expiry and plan
 * digest (`decisionApprovalText('approve', …)`) and must verify, quorum or not.
 */
export const ApproveDecision = z
  .object({
    decisionId: DecisionId,
    signature: z
      .object({ approverId: z.string().max(63), signature: Ed25519Signature })
      .strict()
      .optional(),
  })
  .strict();
export type ApproveDecision = z.infer<typeof ApproveDecision>;

export const RejectDecision = z.object({ decisionId: DecisionId, reason: z.string().min(1).max(500) }).strict();
export type RejectDecision = z.infer<typeof RejectDecision>;

/** `autonomy.expire` (engine, the sweep before each pass): a pending request past its expiry is rejected. */
export const ExpireDecision = z.object({ decisionId: DecisionId, episode: Episode }).strict();
/** `autonomy.requireApproval` (engine): an `auto` decision the budget did not admit waits for approval instead. */
export const RequireApproval = z.object({ decisionId: DecisionId, episode: Episode, reason: z.string().min(1).max(400) }).strict();
/** `autonomy.recordStarted` (engine): the remediation command was accepted. */
export const RecordStarted = z
  .object({
    decisionId: DecisionId,
    episode: Episode,
    commandName: z.string().max(100),
    commandId: z.string().max(64),
    settleMs: z.number().int().nonnegative(),
  })
  .strict();
/** `autonomy.recordOutcome` (engine): what a pass after the settle window said about the key. */
export const RecordOutcome = z
  .object({ decisionId: DecisionId, episode: Episode, passId: z.string().max(64), signalPresent: z.boolean(), sensorOk: z.boolean() })
  .strict();
