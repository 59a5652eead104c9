import { RetryNode } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { PLAN_ACTION_INPUT, PLAN_DIGEST_INPUT } from '../../../schemas/autonomy/plan.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { requestOperation, requireNode, requireState } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';

/** Runs the failed operation again, as a new workflow with the same inputs. */
export const retryNode = defineCommand({
  name: 'metal.retry',
  exposure: ['operator'],
  schema: RetryNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireState(node, 'metal.retry', ['failed']);
    if (!node.failed) throw new DomainError('ILLEGAL_TRANSITION', `node ${node.nodeId} has no failed operation to retry`);
    const approved = command.approvedPlanDigest ? { [PLAN_DIGEST_INPUT]: command.approvedPlanDigest, [PLAN_ACTION_INPUT]: 'metal.retry' } : {};
    return requestOperation(node, node.failed.operation, { ...node.failed.inputs, ...approved }, commandId);
  },
});
