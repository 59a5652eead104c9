import { UnrescueNode } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { requireNode, requireState, requireTenantAccess } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';

export const unrescueNode = defineCommand({
  name: 'metal.unrescue',
  exposure: ['operator', 'tenant'],
  schema: UnrescueNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireTenantAccess(node, command.tenantId, { claimUnowned: false });
    requireState(node, 'metal.unrescue', ['rescue']);
    return [{ type: 'NodeRescueEnded', data: { nodeId: node.nodeId } }];
  },
});
