import { RejectResult } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { workflowAggregate } from './workflow.ts';
import { requireRunningStep } from './stepRules.ts';

/**
 * `workflow.rejectResult`: a result on the running attempt's subject did not verify. It is recorded and refused; the
 * attempt goes on waiting for a valid one (a garbage publish cannot fail a step).
 */
export const rejectResult = defineCommand({
  name: 'workflow.rejectResult',
  exposure: ['engine'],
  schema: RejectResult,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  decide(command, state): WorkflowEvent[] {
    const wf = requireRunningStep(state, command.workflowId, command.stepIndex);
    const p = wf.progress[command.stepIndex]!;
    if (p.status !== 'running' || p.attempt !== command.attempt) {
      throw new DomainError('ILLEGAL_TRANSITION', `step ${command.stepIndex} of ${command.workflowId} is not running attempt ${command.attempt}`);
    }
    const { commandId, reason, agentId } = command;
    return [
      { type: 'AgentResultRejected', data: { workflowId: wf.workflowId, stepIndex: command.stepIndex, commandId, reason, ...(agentId ? { agentId } : {}) } },
    ];
  },
});
