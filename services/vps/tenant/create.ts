import { CreateTenant, SetQuota } from '../../../schemas/vps/tenantCommands.ts';
import type { TenantEvent } from '../../../schemas/vps/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { tenantAggregate } from './tenant.ts';

/** `vps.createTenant`: creating the same tenant again is a no-op; another name under its id is ALREADY_EXISTS. */
export const createTenant = defineCommand({
  name: 'vps.createTenant',
  exposure: ['operator'],
  schema: CreateTenant,
  aggregate: tenantAggregate,
  aggregateId: (command) => command.tenantId,
  decide(command, state): TenantEvent[] {
    if (state.exists) {
      if (state.name === command.name) return [];
      throw new DomainError('ALREADY_EXISTS', `tenant ${command.tenantId} already exists`);
    }
    return [{ type: 'TenantCreated', data: { tenantId: command.tenantId, name: command.name } }];
  },
});

/** `vps.setQuota`: replaces the limits; instances already accepted keep their reservations even above a lower limit. */
export const setQuota = defineCommand({
  name: 'vps.setQuota',
  exposure: ['operator'],
  schema: SetQuota,
  aggregate: tenantAggregate,
  aggregateId: (command) => command.tenantId,
  decide(command, state): TenantEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `tenant ${command.tenantId} does not exist`);
    const { tenantId, instances, vcpus, memoryMib, diskGib } = command;
    const q = state.quota;
    if (q.instances === instances && q.vcpus === vcpus && q.memoryMib === memoryMib && q.diskGib === diskGib) return [];
    return [{ type: 'TenantQuotaSet', data: { tenantId, instances, vcpus, memoryMib, diskGib } }];
  },
});
