import { isDeepStrictEqual } from 'node:util';
import { CreateInstance, resourceDimensions, type Resources } from '../../../schemas/vps/tenantCommands.ts';
import type { TenantEvent } from '../../../schemas/vps/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { flavorRef, offerIn } from '../../../schemas/vps/flavorState.ts';
import { heldByAnother, instanceRef } from '../../../schemas/vps/instanceState.ts';
import { isOfferedTo, poolRef } from '../../../schemas/vps/poolState.ts';
import { reservationOf, type TenantState } from '../../../schemas/vps/tenantState.ts';
import { tenantAggregate, usageOf } from './tenant.ts';

/** Refuses with QUOTA_EXCEEDED, naming the first dimension `request` does not fit in. */
function checkQuota(state: TenantState & { exists: true }, request: Resources): void {
  const { used, reserved } = usageOf(state);
  for (const dimension of resourceDimensions) {
    const inUse = used[dimension] + reserved[dimension];
    const limit = state.quota[dimension];
    if (inUse + request[dimension] > limit) {
      const message = `quota exceeded on ${dimension}: limit ${limit}, in use ${inUse} (used ${used[dimension]}, reserved ${reserved[dimension]}), requested ${request[dimension]}`;
      throw new DomainError('QUOTA_EXCEEDED', message, { issues: [{ path: dimension, message }] });
    }
  }
}

/**
 * `vps.createInstance`, decided on the tenant: the pool must be offered to the tenant and sell the flavor, and the
 * instance must fit in what the quota has left. The `InstanceRequested` it appends is the reservation; two
 * processes deciding at once append against the same tenant sequence, so one of them re-decides on the other's
 * reservation. The same request again is a no-op, another one under the same id is ALREADY_EXISTS.
 */
export const createInstance = defineCommand({
  name: 'vps.createInstance',
  exposure: ['operator', 'tenant'],
  schema: CreateInstance,
  aggregate: tenantAggregate,
  aggregateId: (command) => command.tenantId,
  dependencies: async (command, load) => ({
    pool: await load(poolRef, command.poolId),
    flavor: await load(flavorRef, command.flavorId),
    instance: await load(instanceRef, command.instanceId),
  }),
  decide(command, state, { dependencies, now }): TenantEvent[] {
    const { tenantId, instanceId, poolId, flavorId, image, sshKeys } = command;
    const userData = command.userData ?? null;
    if (!state.exists) throw new DomainError('NOT_FOUND', `tenant ${tenantId} does not exist`);
    const existing = reservationOf(state, instanceId);
    if (existing) {
      if (
        isDeepStrictEqual(
          { poolId, flavorId, image, sshKeys, userData },
          { poolId: existing.poolId, flavorId: existing.flavorId, image: existing.image, sshKeys: existing.sshKeys, userData: existing.userData },
        )
      )
        return [];
      throw new DomainError('ALREADY_EXISTS', `instance ${instanceId} already exists with another specification`);
    }
    if (heldByAnother(dependencies.instance, tenantId)) throw new DomainError('ALREADY_EXISTS', `instance id ${instanceId} is taken`);
    // Not offered and not existing read the same: a tenant learns nothing about pools it was not offered.
    if (!isOfferedTo(dependencies.pool, tenantId)) throw new DomainError('PRECONDITION_FAILED', `pool ${poolId} is not offered to tenant ${tenantId}`);
    const flavor = dependencies.flavor;
    if (!flavor.exists || offerIn(flavor, poolId) === undefined)
      throw new DomainError('PRECONDITION_FAILED', `flavor ${flavorId} is not sold in pool ${poolId}`);
    const resources = { instances: 1, vcpus: flavor.vcpus, memoryMib: flavor.memoryMib, diskGib: flavor.diskGib };
    checkQuota(state, resources);
    return [{ type: 'InstanceRequested', data: { tenantId, instanceId, poolId, flavorId, image, sshKeys, userData, resources, requestedAt: now } }];
  },
});
