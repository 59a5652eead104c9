import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { RemediationPlan } from './plan.ts';
import { Disposition, PolicyDeclaration } from './policies.ts';
import { Signal } from './signals.ts';

const ref = { decisionId: z.string(), episode: z.number().int().positive() };

/**
 * A new episode for a natural key: the signal, the policy as declared, the disposition in force (`disposition` differs
 * from the policy's when escalated or overridden), the plan and its digest, and when an approval request expires.
 */
export const DecisionOpened = defineEvent(
  'DecisionOpened',
  z.object({
    ...ref,
    category: z.string(),
    key: z.string(),
    passId: z.string(),
    signal: Signal,
    policy: PolicyDeclaration,
    disposition: Disposition,
    /** Why the disposition differs from the declared one (`override`, `escalated`), else null. */
    dispositionReason: z.string().nullable(),
    plan: RemediationPlan,
    planDigest: z.string(),
    expiresAt: z.string().nullable(),
  }),
);
/** The same key signalled again while its request is pending, with something new: updated in place, approvals reset. */
export const DecisionUpdated = defineEvent(
  'DecisionUpdated',
  z.object({ ...ref, passId: z.string(), signal: Signal, plan: RemediationPlan, planDigest: z.string() }),
);
/** One approval toward the quorum (signed by a registered approver key, or the approving token when there is no quorum). */
export const DecisionApprovalRecorded = defineEvent(
  'DecisionApprovalRecorded',
  z.object({ ...ref, approverId: z.string(), signed: z.boolean(), planDigest: z.string() }),
);
/** Approved: by the policy (`auto`) or by approvers. The plan with this digest, and no other, may now start. */
export const DecisionApproved = defineEvent('DecisionApproved', z.object({ ...ref, by: z.enum(['policy', 'approvers']), planDigest: z.string() }));
/** An `auto` decision that could not take budget (exhausted, or any error on the budget path) now waits for approval. */
export const DecisionApprovalRequired = defineEvent('DecisionApprovalRequired', z.object({ ...ref, reason: z.string().max(400), expiresAt: z.string() }));
/** Rejected by an approver, or timed out; no new episode before `cooldownUntil`. */
export const DecisionRejected = defineEvent(
  'DecisionRejected',
  z.object({ ...ref, reason: z.enum(['rejected', 'expired']), by: z.string().nullable(), note: z.string().max(500).nullable(), cooldownUntil: z.string() }),
);
/** The remediation was sent (its command id is derived from decision and episode, so it is sent once). */
export const DecisionRemediationStarted = defineEvent(
  'DecisionRemediationStarted',
  z.object({ ...ref, commandName: z.string(), commandId: z.string(), settleUntil: z.string() }),
);
/**
 * After the settle window, in a pass: effective only when the signal is absent AND its sensor reported ok. Three
 * ineffective outcomes in a row escalate: the next episode needs approval whatever the policy says.
 */
export const DecisionOutcomeRecorded = defineEvent(
  'DecisionOutcomeRecorded',
  z.object({
    ...ref,
    passId: z.string(),
    effective: z.boolean(),
    signalPresent: z.boolean(),
    sensorOk: z.boolean(),
    ineffectiveStreak: z.number().int(),
    escalated: z.boolean(),
  }),
);
/** A notify or block episode ends: its signal is gone (and its sensor said so). */
export const DecisionResolved = defineEvent('DecisionResolved', z.object({ ...ref, passId: z.string() }));

export const decisionEvents = [
  DecisionOpened,
  DecisionUpdated,
  DecisionApprovalRecorded,
  DecisionApproved,
  DecisionApprovalRequired,
  DecisionRejected,
  DecisionRemediationStarted,
  DecisionOutcomeRecorded,
  DecisionResolved,
] as const;
export type DecisionEvent = EventOf<(typeof decisionEvents)[number]>;
