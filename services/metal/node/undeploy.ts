import { UndeployNode } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { requestOperation, requireNode, requireState, requireTenantAccess } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';
import { erasingInputs } from './erasingInputs.ts';

export const undeployNode = defineCommand({
  name: 'metal.undeploy',
  exposure: ['operator', 'tenant'],
  schema: UndeployNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: async (command, load) => ({ inputs: await erasingInputs(command.nodeId, load) }),
  decide(command, state, { commandId, dependencies }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireTenantAccess(node, command.tenantId, { claimUnowned: false });
    if (node.current?.operation === 'release') return [];
    requireState(node, 'metal.undeploy', ['deployed']);
    return requestOperation(node, 'release', dependencies.inputs, commandId);
  },
});
