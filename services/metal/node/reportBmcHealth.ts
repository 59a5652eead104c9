import { ReportBmcHealth } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { nodeAggregate } from './node.ts';

/**
 * `metal.reportBmcHealth`: automatic maintenance on BMC loss. Set only when the node is not already in maintenance
 * (an operator's or the platform's flag and reason stay as they are), cleared only when the BMC set it.
 */
export const reportBmcHealth = defineCommand({
  name: 'metal.reportBmcHealth',
  exposure: ['engine'],
  schema: ReportBmcHealth,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `node ${command.nodeId} is not enrolled`);
    if (!command.reachable && !state.maintenance) {
      const reason = `BMC unreachable${command.detail ? `: ${command.detail}` : ''}`;
      return [{ type: 'NodeMaintenanceSet', data: { nodeId: command.nodeId, on: true, reason, source: 'bmc' } }];
    }
    if (command.reachable && state.maintenance && state.maintenanceSource === 'bmc') {
      return [{ type: 'NodeMaintenanceSet', data: { nodeId: command.nodeId, on: false, reason: null, source: 'bmc' } }];
    }
    return [];
  },
});
