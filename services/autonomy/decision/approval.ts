import { ApproveDecision, RejectDecision } from '../../../schemas/autonomy/decisionCommands.ts';
import type { DecisionEvent } from '../../../schemas/autonomy/decisionEvents.ts';
import { cooldownMsOf } from '../../../schemas/autonomy/policies.ts';
import { signatureHolds } from '../../../schemas/agent/agentResultCodec.ts';
import { approvalMessage } from '../../../schemas/trust/approvals.ts';
import { currentQuorum } from '../../../schemas/trust/approversState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
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

/**
 * `autonomy.approve` (API: approver and admin tokens only). Without an approver quorum one approval approves. With one
 * (`pki.setApprovers`), only Ed25519 signatures of registered approvers over the plan digest count, each approver
 * once, until the threshold: exactly this plan is approved, and `workflow.start` checks its digest again.
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
    const ref = { decisionId: decision.decisionId, episode: decision.episode };
    if (quorum.threshold === 0) {
      const approverId = command.signature?.approverId ?? actor;
      return [
        { type: 'DecisionApprovalRecorded', data: { ...ref, approverId, signed: command.signature !== undefined, planDigest: decision.planDigest } },
        { type: 'DecisionApproved', data: { ...ref, by: 'approvers', planDigest: decision.planDigest } },
      ];
    }
    if (!command.signature)
      throw new DomainError('APPROVAL_SIGNATURE_INVALID', `an approver quorum is set: approve ${decision.decisionId} with a signature over its plan digest`);
    const key = quorum.approvers.find((a) => a.approverId === command.signature!.approverId);
    if (!key) throw new DomainError('APPROVER_UNKNOWN', `${command.signature.approverId} is not an approver`);
    if (!signatureHolds(approvalMessage('approve', decision.planDigest), Buffer.from(command.signature.signature, 'base64'), key.publicKey)) {
      throw new DomainError('APPROVAL_SIGNATURE_INVALID', `signature of ${key.approverId} does not verify for plan ${decision.planDigest}`);
    }
    if (decision.approvals.includes(key.approverId)) return [];
    const events: DecisionEvent[] = [
      { type: 'DecisionApprovalRecorded', data: { ...ref, approverId: key.approverId, signed: true, planDigest: decision.planDigest } },
    ];
    if (decision.approvals.length + 1 >= quorum.threshold)
      events.push({ type: 'DecisionApproved', data: { ...ref, by: 'approvers', planDigest: decision.planDigest } });
    return events;
  },
});

/** `autonomy.reject` (API: approver and admin tokens): the request ends and the key cools down. */
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
