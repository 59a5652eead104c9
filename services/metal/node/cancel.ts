import { CancelNode } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { requireNode } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';

/**
 * `metal.cancel` (operators): asks the node's running operation to stop. The orchestrator cancels the workflow
 * (`workflow.cancel`: nothing new starts, a running destructive step is waited for) and then ends the operation
 * with `metal.completeCancel`. A node with no operation under way has nothing to cancel (ILLEGAL_TRANSITION); asking
 * again is a no-op.
 */
export const cancelNode = defineCommand({
  name: 'metal.cancel',
  exposure: ['operator'],
  schema: CancelNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    const current = node.current;
    if (!current) throw new DomainError('ILLEGAL_TRANSITION', `node ${node.nodeId} is ${node.state}: no operation to cancel`);
    if (current.cancelReason !== undefined) return [];
    const reason = command.reason ?? 'cancelled by an operator';
    return [{ type: 'NodeCancelRequested', data: { nodeId: node.nodeId, operation: current.operation, workflowId: current.workflowId, reason } }];
  },
});
