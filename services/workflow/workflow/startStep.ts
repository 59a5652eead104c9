import { StartStep } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { workflowAggregate } from './workflow.ts';
import { requireRunningStep } from './stepRules.ts';

/**
 * `workflow.startStep`: the next attempt of the current step begins. The attempt must be the one due: the next after
 * scheduling (the first, or the next after a restart from the boot), the same one while running (a redelivered message
 * resuming it), or one more after a retryable failure. Nothing new starts once a cancel was asked for.
 */
export const startStep = defineCommand({
  name: 'workflow.startStep',
  exposure: ['engine'],
  schema: StartStep,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  decide(command, state, { now }): WorkflowEvent[] {
    const wf = requireRunningStep(state, command.workflowId, command.stepIndex);
    const p = wf.progress[command.stepIndex]!;
    if (p.status === 'running' && p.attempt === command.attempt) return [];
    if (wf.cancel) throw new DomainError('ILLEGAL_TRANSITION', `workflow ${command.workflowId} is being cancelled`);
    const due = p.status === 'scheduled' || (p.status === 'failed' && p.error?.retryable) ? p.attempt + 1 : undefined;
    if (due !== command.attempt) {
      throw new DomainError('ILLEGAL_TRANSITION', `step ${command.stepIndex} of ${command.workflowId} is ${p.status} at attempt ${p.attempt}`);
    }
    const { workflowId } = wf;
    return [
      {
        type: 'StepStarted',
        data: {
          workflowId,
          stepIndex: command.stepIndex,
          stepId: wf.steps[command.stepIndex]!.id,
          attempt: command.attempt,
          startedAt: now,
          nonce: command.nonce,
        },
      },
    ];
  },
});
