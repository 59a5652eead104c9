import { ApproveBatch } from '../../../schemas/metal/workflowCommands.ts';
import { approvalMessage } from '../../../schemas/trust/approvals.ts';
import { signatureHolds } from '../../../schemas/agent/agentResultCodec.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import type { ApproversState } from '../../../schemas/trust/approversState.ts';
import { approvalStatus, type ApprovalBatch, type WorkflowState } from './workflow.ts';

/** The open batch an approver may sign, after checking who they are and what they signed. */
export function signedBatch(state: WorkflowState, command: ApproveBatch, verdict: 'approve' | 'reject', quorum: ApproversState, nowMs: number): ApprovalBatch {
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
