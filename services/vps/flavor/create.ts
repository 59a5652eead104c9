import { CreateFlavor, MapFlavor } from '../../../schemas/vps/flavorCommands.ts';
import type { FlavorEvent } from '../../../schemas/vps/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { offerIn } from '../../../schemas/vps/flavorState.ts';
import { poolRef } from '../../../schemas/vps/poolState.ts';
import { flavorAggregate } from './flavor.ts';

/** `vps.createFlavor`: a size is fixed once created (reservations were counted with it); the same size again is a no-op. */
export const createFlavor = defineCommand({
  name: 'vps.createFlavor',
  exposure: ['operator'],
  schema: CreateFlavor,
  aggregate: flavorAggregate,
  aggregateId: (command) => command.flavorId,
  decide(command, state): FlavorEvent[] {
    const { flavorId, vcpus, memoryMib, diskGib } = command;
    if (state.exists) {
      if (state.vcpus === vcpus && state.memoryMib === memoryMib && state.diskGib === diskGib) return [];
      throw new DomainError('ALREADY_EXISTS', `flavor ${flavorId} already exists with another size`);
    }
    return [{ type: 'FlavorCreated', data: { flavorId, vcpus, memoryMib, diskGib } }];
  },
});

/** `vps.mapFlavor`: sells the flavor in a pool as a provider offer; mapping it again to another offer replaces it. */
export const mapFlavor = defineCommand({
  name: 'vps.mapFlavor',
  exposure: ['operator'],
  schema: MapFlavor,
  aggregate: flavorAggregate,
  aggregateId: (command) => command.flavorId,
  dependencies: async (command, load) => ({ pool: await load(poolRef, command.poolId) }),
  decide(command, state, { dependencies }): FlavorEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `flavor ${command.flavorId} does not exist`);
    if (offerIn(state, command.poolId) === command.offerId) return [];
    if (!dependencies.pool.exists) throw new DomainError('PRECONDITION_FAILED', `pool ${command.poolId} does not exist`);
    return [{ type: 'FlavorMapped', data: { flavorId: command.flavorId, poolId: command.poolId, offerId: command.offerId } }];
  },
});
