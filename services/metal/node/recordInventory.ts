import { RecordInventory } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { requireNode } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';

export const recordInventory = defineCommand({
  name: 'metal.recordInventory',
  exposure: ['engine'],
  schema: RecordInventory,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (JSON.stringify(node.inventory ?? null) === JSON.stringify(command.inventory)) return [];
    return [{ type: 'NodeInventoryRecorded', data: { nodeId: node.nodeId, workflowId: command.workflowId, inventory: command.inventory } }];
  },
});
