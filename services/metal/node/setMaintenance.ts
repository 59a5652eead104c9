import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { SetMaintenance } from '../../../schemas/metal/nodeCommands.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { nodeAggregate } from './node.ts';

export const setMaintenance = defineCommand({
  name: 'metal.setMaintenance',
  exposure: ['operator'],
  schema: SetMaintenance,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `node ${command.nodeId} is not enrolled`);
    const reason = command.on ? (command.reason ?? null) : null;
    if (state.maintenance === command.on && state.maintenanceReason === reason) return [];
    return [{ type: 'NodeMaintenanceSet', data: { nodeId: command.nodeId, on: command.on, reason, source: 'operator' } }];
  },
});
