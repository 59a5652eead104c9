import type { HoldBookEvent } from '../../../schemas/vps/events.ts';
import { UnplaceInstance } from '../../../schemas/vps/placementCommands.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { holdBookAggregate } from './holdBook.ts';

/**
 * `vps.unplaceInstance` (engine: the reconciler, once the instance's host removed it): the capacity it took on its
 * node is free again. Not placed (never, or already unplaced): a no-op, so a repeat is harmless.
 */
export const unplaceInstance = defineCommand({
  name: 'vps.unplaceInstance',
  exposure: ['engine'],
  schema: UnplaceInstance,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  decide(command, state, { now }): HoldBookEvent[] {
    const placed = state.instances?.[command.instanceId];
    if (!placed) return [];
    if (placed.tenantId !== command.tenantId) throw new DomainError('NOT_FOUND', `instance ${command.instanceId} not found`);
    const { siteId, instanceId, tenantId } = command;
    return [{ type: 'InstanceUnplaced', data: { siteId, instanceId, tenantId, nodeId: placed.nodeId, unplacedAt: now } }];
  },
});
