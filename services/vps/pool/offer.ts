import { PoolTenant } from '../../../schemas/vps/poolCommands.ts';
import type { PoolEvent } from '../../../schemas/vps/events.ts';
import { tenantRef } from '../../../schemas/vps/tenantState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { poolAggregate } from './pool.ts';

/** `vps.offerPool`: the tenant may create instances in the pool; offering it again is a no-op. */
export const offerPool = defineCommand({
  name: 'vps.offerPool',
  exposure: ['operator'],
  schema: PoolTenant,
  aggregate: poolAggregate,
  aggregateId: (command) => command.poolId,
  dependencies: async (command, load) => ({ tenant: await load(tenantRef, command.tenantId) }),
  decide(command, state, { dependencies }): PoolEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `pool ${command.poolId} does not exist`);
    if (state.offeredTo.includes(command.tenantId)) return [];
    if (!dependencies.tenant.exists) throw new DomainError('PRECONDITION_FAILED', `tenant ${command.tenantId} does not exist`);
    return [{ type: 'PoolOffered', data: { poolId: command.poolId, tenantId: command.tenantId } }];
  },
});

/** `vps.withdrawPool`: no new instances for the tenant there; its existing instances are untouched. */
export const withdrawPool = defineCommand({
  name: 'vps.withdrawPool',
  exposure: ['operator'],
  schema: PoolTenant,
  aggregate: poolAggregate,
  aggregateId: (command) => command.poolId,
  decide(command, state): PoolEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `pool ${command.poolId} does not exist`);
    if (!state.offeredTo.includes(command.tenantId)) return [];
    return [{ type: 'PoolWithdrawn', data: { poolId: command.poolId, tenantId: command.tenantId } }];
  },
});
