import type { HoldBookEvent } from '../../../schemas/vps/events.ts';
import { RequestRelocation } from '../../../schemas/vps/placementCommands.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { holdBookAggregate } from './holdBook.ts';

/**
 * `vps.requestRelocation` (engine: the autonomy engine's `relocate` lane, once its policy let it run): the node a
 * metal-pool instance is placed on is lost, so the instance is to be placed again on another node of the site
 * (`InstanceRelocationRequested`); the reconciler carries it out with `vps.relocateInstance`. Placed elsewhere
 * already (moved, or never on that node), requested already, or no longer placed: a no-op, so a repeat, or a decision
 * acting on a signal that is already out of date, changes nothing. Another tenant's instance is NOT_FOUND.
 */
export const requestRelocation = defineCommand({
  name: 'vps.requestRelocation',
  exposure: ['engine'],
  schema: RequestRelocation,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  decide(command, state, { now }): HoldBookEvent[] {
    const { siteId, tenantId, instanceId, fromNodeId, reason } = command;
    const placed = state.instances?.[instanceId];
    if (placed && placed.tenantId !== tenantId) throw new DomainError('NOT_FOUND', `instance ${instanceId} not found`);
    if (!placed || placed.nodeId !== fromNodeId || placed.relocation) return [];
    return [{ type: 'InstanceRelocationRequested', data: { siteId, instanceId, tenantId, fromNodeId, reason, requestedAt: now } }];
  },
});
