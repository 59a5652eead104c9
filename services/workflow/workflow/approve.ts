import { ApproveBatch } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { currentQuorum } from '../../../schemas/trust/approversState.ts';
import { workflowAggregate } from './workflow.ts';
import { signedBatch } from './signedBatch.ts';

/** `workflow.approve`: one distinct approver's signature; a repeated approval by the same approver is a no-op. */
export const approveBatch = defineCommand({
  name: 'workflow.approve',
  exposure: ['approver'],
  schema: ApproveBatch,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  dependencies: async (_command, load) => ({ quorum: await currentQuorum(load) }),
  decide(command, state, { now, dependencies }): WorkflowEvent[] {
    const batch = signedBatch(state, command, 'approve', dependencies.quorum, Date.parse(now));
    if (batch.grantedBy.includes(command.approverId)) return [];
    return [{ type: 'ApprovalGranted', data: { workflowId: command.workflowId, approverId: command.approverId, digest: batch.digest } }];
  },
});
