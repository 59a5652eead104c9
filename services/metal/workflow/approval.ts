import { APPROVERS_ID, ApproveBatch, approvalMessage, RejectBatch } from '../../../schemas/trust/approvals.ts';
import { signatureHolds } from '../../../schemas/agent/agentResultCodec.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
import { approversAggregate, type ApproversState } from '../../trust/approvers/approvers.ts';
import { approvalStatus, workflowAggregate, type ApprovalBatch, type WorkflowState } from './workflow.ts';

/** The open batch an approver may sign, after checking who they are and what they signed. */
function signedBatch(
  state: WorkflowState,
  command: ApproveBatch,
  verdict: 'approve' | 'reject',
  quorum: ApproversState,
  nowMs: number,
): ApprovalBatch {
  if (!state.exists) throw new DomainError('NOT_FOUND', `workflow ${command.workflowId} does not exist`);
  const batch = state.approval;
  if (!batch) throw new DomainError('PRECONDITION_FAILED', `workflow ${command.workflowId} has no approval batch`);
  if (state.status !== 'running') throw new DomainError('ILLEGAL_TRANSITION', `workflow ${command.workflowId} is ${state.status}`);
  const key = batch.approverIds.includes(command.approverId) ? quorum.approvers.find((a) => a.approverId === command.approverId) : undefined;
  if (!key) throw new DomainError('APPROVER_UNKNOWN', `${command.approverId} is not an approver of workflow ${command.workflowId}`);
  if (!signatureHolds(approvalMessage(verdict, batch.digest), Buffer.from(command.signature, 'base64'), key.publicKey)) {
    throw new DomainError('APPROVAL_SIGNATURE_INVALID', `signature of ${command.approverId} does not verify for this batch`);
  }
  if (batch.rejected) throw new DomainError('ILLEGAL_TRANSITION', `workflow ${command.workflowId} was rejected by ${batch.rejected.approverId}`);
  if (approvalStatus(state, batch.stepIndexes[0]!, nowMs) === 'expired') {
    throw new DomainError('APPROVAL_EXPIRED', `the approval batch of ${command.workflowId} expired at ${batch.expiresAt}`);
  }
  return batch;
}

/** `workflow.approve`: one distinct approver's signature; a repeated approval by the same approver is a no-op. */
export const approveBatch = defineCommand({
  name: 'workflow.approve',
  exposure: ['approver'],
  schema: ApproveBatch,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  dependencies: async (_command, load) => ({ quorum: await load(approversAggregate, APPROVERS_ID) }),
  decide(command, state, { now, dependencies }): WorkflowEvent[] {
    const batch = signedBatch(state, command, 'approve', dependencies.quorum, Date.parse(now));
    if (batch.grantedBy.includes(command.approverId)) return [];
    return [{ type: 'ApprovalGranted', data: { workflowId: command.workflowId, approverId: command.approverId, digest: batch.digest } }];
  },
});

/**
 * `workflow.reject`: an approver refuses the batch. Nothing destructive of it is ever sent; the workflow fails at the
 * first destructive step (so its node fails with the approver's reason).
 */
export const rejectBatch = defineCommand({
  name: 'workflow.reject',
  exposure: ['approver'],
  schema: RejectBatch,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  dependencies: async (_command, load) => ({ quorum: await load(approversAggregate, APPROVERS_ID) }),
  decide(command, state, { now, dependencies }): WorkflowEvent[] {
    const batch = signedBatch(state, command, 'reject', dependencies.quorum, Date.parse(now));
    const stepIndex = batch.stepIndexes[0]!;
    const step = (state as Extract<WorkflowState, { exists: true }>).steps[stepIndex]!;
    const reason = `rejected by ${command.approverId}: ${command.reason}`;
    return [
      { type: 'ApprovalRejected', data: { workflowId: command.workflowId, approverId: command.approverId, digest: batch.digest, reason: command.reason } },
      { type: 'WorkflowFailed', data: { workflowId: command.workflowId, failedStep: step.id, stepIndex, code: 'APPROVAL_REJECTED', reason } },
    ];
  },
});
