import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { ResourceId } from '../ids.ts';
import { approvalText, decisionApprovalText, rolloutApprovalText, type DecisionApprovalRequest, type RolloutApprovalRequest } from './approvalText.ts';

const PublicKey = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 32-byte Ed25519 public key');

export const Approver = z.object({ approverId: ResourceId, publicKey: PublicKey }).strict();
export type Approver = z.infer<typeof Approver>;

/**
 * `pki.setApprovers`: the approver keys and the threshold M, a positive integer ≤ the number of approvers: every
 * workflow that sends destructive commands opens a batch that needs M distinct approver signatures before the first
 * of them is enqueued. No approvers and M = 0 turns the quorum off. Approvals expire `approvalTtlSeconds` after the
 * batch opens. Keys must be points of the curve's prime-order subgroup (`pki.setApprovers` refuses small-order ones).
 */
export const SetApprovers = z
  .object({
    approvers: z.array(Approver).max(32),
    // -0 passes `min(0)` and would read as "no quorum" once stored: refused outright.
    threshold: z
      .number()
      .int()
      .min(0)
      .max(32)
      .refine((n) => !Object.is(n, -0), 'threshold must not be -0'),
    approvalTtlSeconds: z
      .number()
      .int()
      .min(60)
      .max(7 * 86_400)
      .default(3_600),
  })
  .strict()
  .refine((c) => c.threshold <= c.approvers.length, { message: 'threshold exceeds the number of approvers', path: ['threshold'] })
  .refine((c) => c.threshold >= 1 || c.approvers.length === 0, {
    message: 'threshold must be at least 1 when approvers are set (no approvers turns the quorum off)',
    path: ['threshold'],
  })
  .refine((c) => new Set(c.approvers.map((a) => a.approverId)).size === c.approvers.length, { message: 'approver ids repeat', path: ['approvers'] });
export type SetApprovers = z.input<typeof SetApprovers>;

/** What an approver signs (`approvalText`), as bytes. */
export const approvalMessage = (verdict: 'approve' | 'reject', digest: string) => Buffer.from(approvalText(verdict, digest), 'utf8');

/** What an approver signs for an autonomy decision (`decisionApprovalText`), as bytes. */
export const decisionApprovalMessage = (verdict: 'approve' | 'reject', request: DecisionApprovalRequest) =>
  Buffer.from(decisionApprovalText(verdict, request), 'utf8');

/** What an approver signs for a rollout (`rolloutApprovalText`), as bytes. */
export const rolloutApprovalMessage = (verdict: 'approve' | 'reject', request: RolloutApprovalRequest) =>
  Buffer.from(rolloutApprovalText(verdict, request), 'utf8');

export const ApproversSet = defineEvent(
  'ApproversSet',
  z.object({ approvers: z.array(Approver), threshold: z.number().int(), approvalTtlSeconds: z.number().int() }),
);
export const approverEvents = [ApproversSet] as const;
export type ApproverEvent = EventOf<(typeof approverEvents)[number]>;

/** The singleton id of the approvers aggregate (`bc.evt.trust.approvers.fleet`). */
export const APPROVERS_ID = 'fleet';
