import { CompleteStep } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { nodeRef } from '../../../schemas/metal/nodeState.ts';
import { attests, signerOf } from './attestation.ts';
import { cancelledEvent } from './cancel.ts';
import { workflowAggregate } from './workflow.ts';
import { requireRunningStep, wipeOutput } from './stepRules.ts';

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
    // A wipe is checked against the inventory of the node the workflow runs on; no other step reads the node.
    const wf = await load(workflowAggregate, command.workflowId, { settled: true });
    const wipe = wf.exists && wf.steps[command.stepIndex]?.attests === 'wipe';
    const node = wipe ? await load(nodeRef, wf.nodeId) : undefined;
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
    const { id: stepId, attests: attested } = wf.steps[command.stepIndex]!;
    // What the step declared it attests is checked here, never taken from its output.
    const output =
      attested === 'wipe'
        ? wipeOutput(command.output, attests(wf, command.stepIndex, command.attempt, command.signedResult, dependencies.signer, dependencies.inventory))
        : (command.output ?? null);
    const events: WorkflowEvent[] = [{ type: 'StepSucceeded', data: { workflowId, stepIndex: command.stepIndex, stepId, attempt: command.attempt, output } }];
    if (next >= wf.steps.length) events.push({ type: 'WorkflowCompleted', data: { workflowId } });
    else if (wf.cancel) events.push(cancelledEvent(wf, wf.cancel.reason, next));
    else events.push({ type: 'StepScheduled', data: { workflowId, stepIndex: next, stepId: wf.steps[next]!.id, attempt: wf.progress[next]!.attempt + 1 } });
    return events;
  },
});
