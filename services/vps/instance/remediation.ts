import { CompleteInstanceRemediation, FailInstanceRemediation } from '../../../schemas/vps/instanceRemediation.ts';
import type { InstanceEvent } from '../../../schemas/vps/events.ts';
import type { InstanceState } from '../../../schemas/vps/instanceState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { instanceAggregate } from './instance.ts';

/** For the orchestrator's commands about one workflow: the instance must be running exactly that remediation. */
function requireRemediation(state: InstanceState, command: CompleteInstanceRemediation) {
  if (state.tenantId !== command.tenantId || state.remediation?.workflowId !== command.workflowId)
    throw new DomainError('ILLEGAL_TRANSITION', `instance ${command.instanceId} is not running workflow ${command.workflowId}`);
  return state.remediation;
}

/** An end already recorded for this workflow: a redelivered end is a no-op. */
const ended = (state: InstanceState, workflowId: string) => state.remediation?.workflowId !== workflowId && state.attention?.workflowId === workflowId;

/** `vps.completeRemediation` (orchestrator): the workflow completed; the instance wants its prior state again. */
export const completeInstanceRemediation = defineCommand({
  name: 'vps.completeRemediation',
  exposure: ['engine'],
  schema: CompleteInstanceRemediation,
  aggregate: instanceAggregate,
  aggregateId: (command) => command.instanceId,
  decide(command, state): InstanceEvent[] {
    if (!state.remediation && state.tenantId === command.tenantId) return [];
    const { returnTo } = requireRemediation(state, command);
    const { instanceId, tenantId, workflowId } = command;
    return [{ type: 'InstanceRemediationCompleted', data: { instanceId, tenantId, workflowId, returnTo } }];
  },
});

/** `vps.failRemediation` (orchestrator): the workflow failed or could not start; the instance needs attention. */
export const failInstanceRemediation = defineCommand({
  name: 'vps.failRemediation',
  exposure: ['engine'],
  schema: FailInstanceRemediation,
  aggregate: instanceAggregate,
  aggregateId: (command) => command.instanceId,
  decide(command, state): InstanceEvent[] {
    if (ended(state, command.workflowId)) return [];
    requireRemediation(state, command);
    const { instanceId, tenantId, workflowId, reason, failedStep } = command;
    return [{ type: 'InstanceRemediationFailed', data: { instanceId, tenantId, workflowId, reason, failedStep } }];
  },
});
