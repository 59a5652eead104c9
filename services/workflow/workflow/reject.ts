import { RejectBatch } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { currentQuorum } from '../../../schemas/trust/approversState.ts';
import { workflowAggregate, type WorkflowState } from './workflow.ts';
import { signedBatch } from './signedBatch.ts';

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
  dependencies: async (_command, load) => ({ quorum: await currentQuorum(load) }),
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
