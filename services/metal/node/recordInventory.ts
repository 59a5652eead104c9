import { RecordInventory } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { inventoryFindings } from './inventoryFindings.ts';
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
    // A BMC-only inspection compares the new BMC inventory with the last in-band one: the findings follow either side.
    const inBand = command.inBand ?? node.inBandInventory ?? undefined;
    const findings = inBand ? inventoryFindings(command.inventory, inBand) : undefined;
    const unchanged =
      JSON.stringify(node.inventory ?? null) === JSON.stringify(command.inventory) &&
      (command.inBand === undefined || JSON.stringify(node.inBandInventory ?? null) === JSON.stringify(command.inBand));
    if (unchanged) return [];
    return [
      {
        type: 'NodeInventoryRecorded',
        data: {
          nodeId: node.nodeId,
          workflowId: command.workflowId,
          inventory: command.inventory,
          ...(command.inBand ? { inBand: command.inBand } : {}),
          ...(findings ? { findings } : {}),
        },
      },
    ];
  },
});
