import { FailStep } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { cancelledEvent } from './cancel.ts';
import { bootBefore, bootOfReset, bootOfWait, rewindEvents } from './rewind.ts';
import { workflowAggregate } from './workflow.ts';
import { requireRunningStep } from './stepRules.ts';

/**
 * `workflow.failStep`: records the failure; fails the workflow when it is terminal or the step's attempts are used up
 * (attempts before a restart from the boot do not count, except the lost step's own). A step that lost its agent
 * (`AGENT_LOST`) with attempts left restarts the workflow from the boot that started that agent, and a `wait.agentJoined`
 * that failed retryably (`BOOT_LOST`: no script fetched within the boot budget) from the boot it waited for, and so does
 * the reset right before that wait (it may have spent the PXE override before it failed: `rewind.ts` `bootOfReset`).
 * A cancel asked for while it ran takes effect instead of any retry.
 */
export const failStep = defineCommand({
  name: 'workflow.failStep',
  exposure: ['engine'],
  schema: FailStep,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  decide(command, state, { now }): WorkflowEvent[] {
    if (state.exists && state.progress[command.stepIndex]?.status === 'failed' && state.progress[command.stepIndex]?.attempt === command.attempt) return [];
    const wf = requireRunningStep(state, command.workflowId, command.stepIndex);
    const p = wf.progress[command.stepIndex]!;
    if (p.status !== 'running' || p.attempt !== command.attempt) {
      throw new DomainError('ILLEGAL_TRANSITION', `step ${command.stepIndex} of ${command.workflowId} is not running attempt ${command.attempt}`);
    }
    const { workflowId } = wf;
    const step = wf.steps[command.stepIndex]!;
    const events: WorkflowEvent[] = [];
    if (command.rejected) events.push({ type: 'AgentResultRejected', data: { workflowId, stepIndex: command.stepIndex, ...command.rejected } });
    const exhausted = !command.retryable || command.attempt - (p.attemptsBefore ?? 0) >= step.retry.maxAttempts;
    const base = { workflowId, stepIndex: command.stepIndex, stepId: step.id, attempt: command.attempt, code: command.code, message: command.message };
    events.push({ type: 'StepFailed', data: { ...base, retryable: !exhausted && !wf.cancel } });
    if (wf.cancel) {
      events.push(cancelledEvent(wf, wf.cancel.reason, command.stepIndex));
    } else if (exhausted) {
      const reason = `${step.id} failed after ${command.attempt} attempt(s): ${command.code}: ${command.message}`;
      events.push({ type: 'WorkflowFailed', data: { workflowId, failedStep: step.id, stepIndex: command.stepIndex, code: command.code, reason } });
    } else {
      const boot =
        command.code === 'AGENT_LOST'
          ? bootBefore(wf.steps, command.stepIndex)
          : (bootOfWait(wf.steps, command.stepIndex) ?? bootOfReset(wf.steps, command.stepIndex));
      if (boot !== undefined) events.push(...rewindEvents(wf, command.stepIndex, boot, command.code, now));
    }
    return events;
  },
});
