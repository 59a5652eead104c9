import { CompleteStep, FailStep, RejectResult, StartStep } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
import { nodeAggregate } from '../node/node.ts';
import { attests, signerOf, type WipeAttestation } from './attestation.ts';
import { cancelledEvent } from './cancel.ts';
import { bootBefore, rewindEvents } from './rewind.ts';
import { workflowAggregate, type ExistingWorkflow, type WorkflowState } from './workflow.ts';

function requireRunningStep(state: WorkflowState, workflowId: string, stepIndex: number): ExistingWorkflow {
  if (!state.exists) throw new DomainError('NOT_FOUND', `workflow ${workflowId} does not exist`);
  if (state.status !== 'running') throw new DomainError('ILLEGAL_TRANSITION', `workflow ${workflowId} is ${state.status}`);
  if (!state.steps[stepIndex]) throw new DomainError('VALIDATION_FAILED', `workflow ${workflowId} has no step ${stepIndex}`);
  return state;
}

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
    return [{ type: 'StepStarted', data: { workflowId, stepIndex: command.stepIndex, stepId: wf.steps[command.stepIndex]!.id, attempt: command.attempt, startedAt: now, nonce: command.nonce } }];
  },
});

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
    return [{ type: 'AgentResultRejected', data: { workflowId: wf.workflowId, stepIndex: command.stepIndex, commandId, reason, ...(agentId ? { agentId } : {}) } }];
  },
});

/**
 * `workflow.completeStep`: the running attempt succeeded; the next step is scheduled, or the workflow completes. A
 * cancel asked for while it ran takes effect now, unless this was the last step (then the operation is done anyway).
 */
export const completeStep = defineCommand({
  name: 'workflow.completeStep',
  exposure: ['engine'],
  schema: CompleteStep,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  dependencies: async (command, load) => {
    // A wipe is checked against the inventory of the node the workflow runs on.
    const wf = await load(workflowAggregate, command.workflowId);
    const node = wf.exists ? await load(nodeAggregate, wf.nodeId) : undefined;
    return { signer: await signerOf(command.signedResult, load), inventory: node?.exists ? (node.inventory ?? null) : null };
  },
  decide(command, state, { dependencies }): WorkflowEvent[] {
    if (state.exists && state.progress[command.stepIndex]?.status === 'succeeded') return [];
    const wf = requireRunningStep(state, command.workflowId, command.stepIndex);
    const p = wf.progress[command.stepIndex]!;
    if (p.status !== 'running' || p.attempt !== command.attempt) {
      throw new DomainError('ILLEGAL_TRANSITION', `step ${command.stepIndex} of ${command.workflowId} is not running attempt ${command.attempt}`);
    }
    const { workflowId } = wf;
    const next = command.stepIndex + 1;
    const stepId = wf.steps[command.stepIndex]!.id;
    const output =
      stepId === 'disk.wipe'
        ? wipeOutput(command.output, attests(wf, command.stepIndex, command.attempt, command.signedResult, dependencies.signer, dependencies.inventory))
        : (command.output ?? null);
    const events: WorkflowEvent[] = [{ type: 'StepSucceeded', data: { workflowId, stepIndex: command.stepIndex, stepId, attempt: command.attempt, output } }];
    if (next >= wf.steps.length) events.push({ type: 'WorkflowCompleted', data: { workflowId } });
    else if (wf.cancel) events.push(cancelledEvent(wf, wf.cancel.reason, next));
    else events.push({ type: 'StepScheduled', data: { workflowId, stepIndex: next, stepId: wf.steps[next]!.id, attempt: wf.progress[next]!.attempt + 1 } });
    return events;
  },
});

/**
 * A wipe's output, decided here and never taken from the sender: an attested wipe shows the signed report itself and
 * the ramdisk that signed it; an unattested one shows what the executor passed on and why it attests nothing
 * (`unattestedReason`).
 */
function wipeOutput(output: unknown, attestation: WipeAttestation): Record<string, unknown> {
  if (attestation.attested) return { ...attestation.report, attested: true, agentId: attestation.agentId };
  const fields = typeof output === 'object' && output !== null && !Array.isArray(output) ? { ...(output as Record<string, unknown>) } : { result: output ?? null };
  return { ...fields, attested: false, unattestedReason: attestation.reason };
}

/**
 * `workflow.failStep`: records the failure; fails the workflow when it is terminal or the step's attempts are used up
 * (attempts before a restart from the boot do not count, except the lost step's own). A step that lost its agent
 * (`AGENT_LOST`) with attempts left restarts the workflow from the boot that started that agent (`rewind.ts`). A
 * cancel asked for while it ran takes effect instead of any retry.
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
      const boot = command.code === 'AGENT_LOST' ? bootBefore(wf.steps, command.stepIndex) : undefined;
      if (boot !== undefined) events.push(...rewindEvents(wf, command.stepIndex, boot, command.code, now));
    }
    return events;
  },
});
