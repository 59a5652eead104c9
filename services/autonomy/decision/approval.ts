import { ApproveDecision, RejectDecision } from '../../../schemas/autonomy/decisionCommands.ts';
import type { DecisionEvent } from '../../../schemas/autonomy/decisionEvents.ts';
import { cooldownMsOf } from '../../../schemas/autonomy/policies.ts';
import { signatureHolds } from '../../../schemas/agent/agentResultCodec.ts';
import { decisionApprovalMessage } from '../../../schemas/trust/approvals.ts';
import { currentQuorum, type ApproversState } from '../../../schemas/trust/approversState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { decisionAggregate, plusMs, type DecisionState, type ExistingDecision } from './decision.ts';

function pendingRequest(state: DecisionState, decisionId: string, now: string): ExistingDecision {
  if (!state.exists) throw new DomainError('NOT_FOUND', `decision ${decisionId} does not exist`);
  if (state.status === 'closed' && state.closedReason === 'expired') {
    throw new DomainError('APPROVAL_EXPIRED', `the approval request of ${decisionId} expired and was rejected`);
  }
  if (state.status !== 'pending') throw new DomainError('ILLEGAL_TRANSITION', `decision ${decisionId} is ${state.status}, not waiting for approval`);
  if (state.expiresAt !== null && Date.parse(state.expiresAt) <= Date.parse(now)) {
    throw new DomainError('APPROVAL_EXPIRED', `the approval request of ${decisionId} expired at ${state.expiresAt}`);
  }
  return state;
}

/** The approver whose signature this is, once it verifies over exactly this request (`decisionApprovalText`). */
function verifiedApprover(decision: ExistingDecision, signature: NonNullable<ApproveDecision['signature']>, quorum: ApproversState): string {
  const key = quorum.approvers.find((a) => a.approverId === signature.approverId);
  if (!key) {
    const why = quorum.approvers.length === 0 ? 'no approvers are set, so no signature can count' : 'not an approver';
    throw new DomainError('APPROVER_UNKNOWN', `${signature.approverId}: ${why}`);
  }
  if (!signatureHolds(decisionApprovalMessage('approve', decision), Buffer.from(signature.signature, 'base64'), key.publicKey)) {
    throw new DomainError(
      'APPROVAL_SIGNATURE_INVALID',
      `signature of ${key.approverId} does not verify for episode ${decision.episode} of ${decision.decisionId} (plan ${decision.planDigest}, expiring ${decision.expiresAt})`,
    );
  }
  return key.approverId;
}

/**
 * `autonomy.approve` (API: approver tokens; admin tokens only while no quorum is set, `autonomyApiRoutes.ts`). A
 * signature counts only when it verifies: over this decision, episode, expiry and plan digest, by a registered
 * approver's key (`decisionApprovalText`), so it approves exactly this request and no later episode. Without a quorum
 * one approval approves and is recorded under the token that sent it (`signed: false`); a signature sent anyway must
 * verify like any other. With a quorum (`pki.setApprovers`) only signatures count, each approver once, until the
 * threshold; `workflow.start` checks the plan digest again.
 */
export const approveDecision = defineCommand({
  name: 'autonomy.approve',
  exposure: ['approver'],
  schema: ApproveDecision,
  aggregate: decisionAggregate,
  aggregateId: (command) => command.decisionId,
  dependencies: async (_command, load) => ({ quorum: await currentQuorum(load) }),
  decide(command, state, { now, actor, dependencies }): DecisionEvent[] {
    const decision = pendingRequest(state, command.decisionId, now);
    const { quorum } = dependencies;
    const signer = command.signature && verifiedApprover(decision, command.signature, quorum);
    if (quorum.threshold > 0 && signer === undefined) {
      throw new DomainError('APPROVAL_SIGNATURE_INVALID', `an approver quorum is set: approve ${decision.decisionId} with a signature over its request`);
    }
    const approverId = signer ?? actor;
    if (decision.approvals.includes(approverId)) return [];
    const ref = { decisionId: decision.decisionId, episode: decision.episode };
    const events: DecisionEvent[] = [
      { type: 'DecisionApprovalRecorded', data: { ...ref, approverId, signed: signer !== undefined, planDigest: decision.planDigest } },
    ];
    if (decision.approvals.length + 1 >= quorum.threshold)
      events.push({ type: 'DecisionApproved', data: { ...ref, by: 'approvers', planDigest: decision.planDigest } });
    return events;
  },
});

/** `autonomy.reject` (API: approver tokens; admin tokens only while no quorum is set): the request ends and the key cools down. */
export const rejectDecision = defineCommand({
  name: 'autonomy.reject',
  exposure: ['approver'],
  schema: RejectDecision,
  aggregate: decisionAggregate,
  aggregateId: (command) => command.decisionId,
  decide(command, state, { now, actor }): DecisionEvent[] {
    const decision = pendingRequest(state, command.decisionId, now);
    const cooldownUntil = plusMs(now, cooldownMsOf(decision.policy));
    return [
      {
        type: 'DecisionRejected',
        data: { decisionId: decision.decisionId, episode: decision.episode, reason: 'rejected', by: actor, note: command.reason, cooldownUntil },
      },
    ];
  },
});
