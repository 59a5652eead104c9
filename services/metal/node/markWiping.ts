import { MarkWiping } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { requireCurrentWorkflow, requireNode } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';

export const markWiping = defineCommand({
  name: 'metal.markWiping',
  exposure: ['engine'],
  schema: MarkWiping,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.state === 'wiping' && node.current?.workflowId === command.workflowId) return [];
    const current = requireCurrentWorkflow(node, command.workflowId);
    if (current.operation !== 'release' || node.state !== 'releasing') return [];
    return [{ type: 'NodeWipeStarted', data: { nodeId: node.nodeId, workflowId: command.workflowId } }];
  },
});
