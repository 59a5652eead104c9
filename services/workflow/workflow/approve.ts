import { ApproveBatch } from '../../../schemas/metal/workflowCommands.ts';
import { APPROVERS_ID } from '../../../schemas/trust/approvals.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { approversRef } from '../../../schemas/trust/approversState.ts';
import { workflowAggregate } from './workflow.ts';
import { signedBatch } from './signedBatch.ts';

/** `workflow.approve`: one distinct approver's signature; a repeated approval by the same approver is a no-op. */
export const approveBatch = defineCommand({
  name: 'workflow.approve',
  exposure: ['approver'],
  schema: ApproveBatch,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  // From the log: an approver the operator just removed must not count.
  dependencies: async (_command, load) => ({ quorum: await load(approversRef, APPROVERS_ID, { fresh: true }) }),
  decide(command, state, { now, dependencies }): WorkflowEvent[] {
    const batch = signedBatch(state, command, 'approve', dependencies.quorum, Date.parse(now));
    if (batch.grantedBy.includes(command.approverId)) return [];
    return [{ type: 'ApprovalGranted', data: { workflowId: command.workflowId, approverId: command.approverId, digest: batch.digest } }];
  },
});
