import { SetTenantCaps } from '../../../schemas/vps/tenantCommands.ts';
import type { TenantEvent } from '../../../schemas/vps/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { tenantAggregate } from './tenant.ts';

/**
 * `vps.setTenantCaps`: replaces the tenant's caps on concurrent deploys and wipes. The orchestrator folds the event and
 * applies it at its next admission; setting the caps it already has appends nothing.
 */
export const setTenantCaps = defineCommand({
  name: 'vps.setTenantCaps',
  exposure: ['operator'],
  schema: SetTenantCaps,
  aggregate: tenantAggregate,
  aggregateId: (command) => command.tenantId,
  decide(command, state): TenantEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `tenant ${command.tenantId} does not exist`);
    const { tenantId, deploys, wipes } = command;
    const caps = state.caps ?? { deploys: null, wipes: null };
    if (caps.deploys === deploys && caps.wipes === wipes) return [];
    return [{ type: 'TenantCapsSet', data: { tenantId, deploys, wipes } }];
  },
});
