import { AgentCommandKinds, type AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import { approvalStatus, type ExistingWorkflow } from './workflow/workflow.ts';
import type { StepDefinition } from '../../plugins/sdk/defineStep.ts';
import { TerminalError } from '../../plugins/sdk/stepErrors.ts';

/**
 * The check every agent command passes before it is published: the step declared the kind in its `sends`, and a
 * destructive kind of a workflow under quorum belongs to an approved batch. What fails here never reaches an agent.
 */
export function enqueuePolicy(definition: StepDefinition<string, any, any>, wf: ExistingWorkflow, stepIndex: number): (kind: AgentCommandKind) => void {
  return (kind) => {
    if (!definition.sends.includes(kind)) throw new TerminalError('PRECONDITION_FAILED', `step ${definition.id} does not declare ${kind} in its sends`);
    if (wf.approval && AgentCommandKinds[kind].destructive && approvalStatus(wf, stepIndex, Date.now()) !== 'approved') {
      throw new TerminalError('APPROVAL_PENDING', `${kind} is outside an approved batch of ${wf.workflowId}`);
    }
  };
}
