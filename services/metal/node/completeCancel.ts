import { CompleteCancel, RemediationInputs } from '../../../schemas/metal/nodeCommands.ts';
import type { NodeOperation } from '../../../schemas/metal/workflow.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { workflowRef } from '../../../schemas/metal/workflowState.ts';
import { requireNode } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';
import { leavesDiskUnknown, endsFailedAlways } from './cancelOutcome.ts';

/** Where an operation cancelled before any step ran goes back to: where it came from. */
function cancelledBackTo(operation: NodeOperation, inputs: Readonly<Record<string, unknown>>, rescuedFrom: string | null): 'ready' | 'deployed' {
  if (operation === 'deploy') return 'ready';
  if (operation === 'release') return 'deployed';
  const from = operation === 'remediate' ? inputs[RemediationInputs.returnTo] : rescuedFrom;
  return from === 'deployed' ? 'deployed' : 'ready';
}

/**
 * `metal.completeCancel` (orchestrator): the node's workflow is cancelled; the node takes its stated end state. Before
 * any step started, nothing touched the machine: a deploy goes back to `ready`, a release to `deployed`, a rescue to
 * where it came from. Otherwise the operation ends `failed` (reason `cancelled: …`, the step it stopped at), in
 * maintenance for a deploy, a release or a retirement. An inspection or a retirement always ends `failed` (from
 * `enrolled`, `ready` or `failed`: the node keeps no record of which), from which `metal.retry` or `metal.retire` goes on.
 */
export const completeCancel = defineCommand({
  name: 'metal.completeCancel',
  exposure: ['engine'],
  schema: CompleteCancel,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  // Read from the log: the executor records the workflow's steps in its own process, this one may be behind.
  dependencies: async (command, load) => ({ workflow: await load(workflowRef, command.workflowId, { fresh: true }) }),
  decide(command, state, { dependencies }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    const current = node.current;
    if (current?.workflowId !== command.workflowId) return [];
    const wf = dependencies.workflow;
    const cancelled = wf.exists ? wf.status === 'cancelled' : wf.cancelled === true;
    if (!cancelled) throw new DomainError('ILLEGAL_TRANSITION', `workflow ${command.workflowId} is not cancelled`);
    const { nodeId } = node;
    const { operation, workflowId } = current;
    const reason = `cancelled: ${current.cancelReason ?? 'cancelled by an operator'}`;
    const started = wf.exists && wf.progress.some((p) => p.attempt > 0);
    if (!started && !endsFailedAlways.has(operation)) {
      const back = cancelledBackTo(operation, current.inputs, node.rescuedFrom ?? null);
      return [{ type: 'NodeOperationCancelled', data: { nodeId, operation, workflowId, reason, state: back } }];
    }
    const stoppedAt = wf.exists ? (wf.steps[wf.progress.findIndex((p) => p.status !== 'succeeded')]?.id ?? null) : null;
    return [
      { type: 'NodeOperationFailed', data: { nodeId, operation, workflowId, reason, failedStep: stoppedAt, maintenance: leavesDiskUnknown.has(operation) } },
    ];
  },
});
