import { RescueNode } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { requestOperation, requireNode, requireState, requireTenantAccess } from './lifecycle.ts';
import { isAgentless, nodeAggregate } from './node.ts';

export const rescueNode = defineCommand({
  name: 'metal.rescue',
  exposure: ['operator', 'tenant'],
  schema: RescueNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireTenantAccess(node, command.tenantId, { claimUnowned: true });
    if (node.state === 'rescuing' || node.state === 'rescue') return [];
    // Rescue boots the bcd ramdisk, which an agentless pool's nodes never run.
    if (isAgentless(node)) throw new DomainError('UNSUPPORTED', `node ${node.nodeId} is in an agentless pool; rescue needs the bcd ramdisk`);
    requireState(node, 'metal.rescue', ['ready', 'deployed']);
    return requestOperation(node, 'rescue', {}, commandId, command.tenantId);
  },
});
