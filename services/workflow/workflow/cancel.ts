import { CancelWorkflow } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { workflowAggregate, type ExistingWorkflow } from './workflow.ts';

/** The workflow ends cancelled, stopped before `stepIndex` ran to its end (or started at all). */
export function cancelledEvent(wf: ExistingWorkflow, reason: string, stepIndex: number): WorkflowEvent {
  return {
    type: 'WorkflowCancelled',
    data: { workflowId: wf.workflowId, nodeId: wf.nodeId, reason, stepIndex, started: wf.progress.some((p) => p.attempt > 0) },
  };
}

/**
 * `workflow.cancel`: stops a workflow without cutting a destructive step in half. While a destructive step runs, the
 * cancel is recorded and waits for that step's outcome (`completeStep` / `failStep` then end the workflow); a running
 * step that destroys nothing is abandoned at once (its late outcome is refused), and so is a step that is only
 * scheduled, waiting for a retry or for its approval. A workflow that has not started yet never will.
 */
export const cancelWorkflow = defineCommand({
  name: 'workflow.cancel',
  exposure: ['engine'],
  schema: CancelWorkflow,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  decide(command, state): WorkflowEvent[] {
    const { workflowId, nodeId, reason } = command;
    if (!state.exists) return state.cancelled ? [] : [{ type: 'WorkflowCancelled', data: { workflowId, nodeId, reason, stepIndex: null, started: false } }];
    if (state.status !== 'running' || state.cancel) return [];
    const running = state.progress.findIndex((p) => p.status === 'running');
    if (running >= 0 && state.steps[running]!.destructive) return [{ type: 'WorkflowCancelRequested', data: { workflowId, reason, waitingForStep: running } }];
    const notDone = state.progress.findIndex((p) => p.status !== 'succeeded');
    return [cancelledEvent(state, reason, notDone < 0 ? state.steps.length - 1 : notDone)];
  },
});
