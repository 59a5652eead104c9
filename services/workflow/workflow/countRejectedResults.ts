import { CountRejectedResults } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { workflowAggregate } from './workflow.ts';
import { requireRunningStep } from './stepRules.ts';

/**
 * `workflow.countRejectedResults`: results on the running attempt's subject were refused beyond the ones recorded
 * one by one (`workflow.rejectResult`); one count per window, whatever their number.
 */
export const countRejectedResults = defineCommand({
  name: 'workflow.countRejectedResults',
  exposure: ['engine'],
  schema: CountRejectedResults,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  decide(command, state): WorkflowEvent[] {
    const wf = requireRunningStep(state, command.workflowId, command.stepIndex);
    const p = wf.progress[command.stepIndex]!;
    if (p.status !== 'running' || p.attempt !== command.attempt) {
      throw new DomainError('ILLEGAL_TRANSITION', `step ${command.stepIndex} of ${command.workflowId} is not running attempt ${command.attempt}`);
    }
    const { attempt: _attempt, ...counted } = command;
    return [{ type: 'AgentResultsRejectedCounted', data: counted }];
  },
});
