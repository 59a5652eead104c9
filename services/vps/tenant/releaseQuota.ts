import { ReleaseQuota } from '../../../schemas/vps/tenantCommands.ts';
import type { TenantEvent } from '../../../schemas/vps/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { reservationOf, type TenantState } from '../../../schemas/vps/tenantState.ts';
import { tenantAggregate } from './tenant.ts';

function requireReservation(state: TenantState, command: { tenantId: string; instanceId: string }) {
  const reservation = reservationOf(state, command.instanceId);
  if (!reservation) throw new DomainError('NOT_FOUND', `tenant ${command.tenantId} has no instance ${command.instanceId}`);
  return reservation;
}

/**
 * `vps.releaseQuota` (engine: the reconciler, once the instance is deleted or failed before anything was created):
 * gives back exactly what the instance reserved, once.
 */
export const releaseQuota = defineCommand({
  name: 'vps.releaseQuota',
  exposure: ['engine'],
  schema: ReleaseQuota,
  aggregate: tenantAggregate,
  aggregateId: (command) => command.tenantId,
  decide(command, state): TenantEvent[] {
    const reservation = requireReservation(state, command);
    if (reservation.status === 'released') return [];
    return [{ type: 'QuotaReleased', data: { tenantId: command.tenantId, instanceId: command.instanceId } }];
  },
});
