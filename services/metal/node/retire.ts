import { RetireNode } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { requestOperation, requireNode, requireState } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';
import { erasingInputs } from './erasingInputs.ts';

export const retireNode = defineCommand({
  name: 'metal.retire',
  exposure: ['operator'],
  schema: RetireNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: async (command, load) => ({ inputs: await erasingInputs(command.nodeId, load) }),
  decide(command, state, { commandId, dependencies }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.state === 'retired' || node.current?.operation === 'retire') return [];
    requireState(node, 'metal.retire', ['enrolled', 'ready', 'failed']);
    return requestOperation(node, 'retire', dependencies.inputs, commandId);
  },
});
