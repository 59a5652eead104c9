import { StartWorkflow } from '../../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../commands/commandDefinition.ts';
import { resolveSteps } from '../../workflow/defineProfile.ts';
import { builtinProfiles } from '../profiles/builtin.ts';
import { workflowAggregate } from './workflow.ts';

/** `workflow.start`: resolve the operation's profile, freeze its steps into the log and schedule the first one. */
export const startWorkflow = defineCommand({
  name: 'workflow.start',
  schema: StartWorkflow,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  decide(command, state, { now }): WorkflowEvent[] {
    if (state.exists) return [];
    const profile = builtinProfiles[command.operation];
    const steps = resolveSteps(profile, command.inputs);
    const { workflowId, nodeId, siteId, operation } = command;
    return [
      { type: 'WorkflowStarted', data: { workflowId, nodeId, siteId, operation, profile: { id: profile.id, version: profile.version }, steps, startedAt: now } },
      { type: 'StepScheduled', data: { workflowId, stepIndex: 0, stepId: steps[0]!.id, attempt: 1 } },
    ];
  },
});
