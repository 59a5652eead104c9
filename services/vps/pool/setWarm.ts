import { isDeepStrictEqual } from 'node:util';
import type { PoolEvent } from '../../../schemas/vps/events.ts';
import { flavorRef, offerIn, type FlavorState } from '../../../schemas/vps/flavorState.ts';
import { SetWarmPool } from '../../../schemas/vps/warmPool.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { poolAggregate } from './pool.ts';

/**
 * `vps.setWarmPool` (operator): how many warm slots of each flavor and image a metal pool keeps ready, and how old one
 * may grow. The `vps-reconciler` keeps them (docs/vps.md, "Warm pools"). The pool must be a metal pool with a runtime,
 * each flavor exist and be sold in it; what a slot takes of a node is the flavor's size, fixed here. The same setting
 * again is a no-op.
 */
export const setWarmPool = defineCommand({
  name: 'vps.setWarmPool',
  exposure: ['operator'],
  schema: SetWarmPool,
  aggregate: poolAggregate,
  aggregateId: (command) => command.poolId,
  dependencies: async (command, load) => {
    const flavors = new Map<string, FlavorState>();
    for (const { flavorId } of command.flavors) if (!flavors.has(flavorId)) flavors.set(flavorId, await load(flavorRef, flavorId));
    return { flavors };
  },
  decide(command, state, { dependencies, now }): PoolEvent[] {
    const { poolId, maxSlotAgeSeconds } = command;
    if (!state.exists) throw new DomainError('NOT_FOUND', `pool ${poolId} not found`);
    if (state.class !== 'metal' || state.runtime === undefined)
      throw new DomainError('PRECONDITION_FAILED', `pool ${poolId} is not a metal pool with a runtime: it keeps no warm slots`);
    const flavors = command.flavors.map(({ flavorId, image, count }) => {
      const flavor = dependencies.flavors.get(flavorId) ?? { exists: false };
      if (!flavor.exists || offerIn(flavor, poolId) === undefined)
        throw new DomainError('PRECONDITION_FAILED', `flavor ${flavorId} is not sold in pool ${poolId} (vps.mapFlavor)`);
      return { flavorId, image, count, resources: { vcpus: flavor.vcpus, memoryMib: flavor.memoryMib, diskGib: flavor.diskGib } };
    });
    const setting = { flavors, maxSlotAgeSeconds };
    if (isDeepStrictEqual(state.warm ?? { flavors: [], maxSlotAgeSeconds }, setting)) return [];
    return [{ type: 'PoolWarmSet', data: { poolId, ...setting, setAt: now } }];
  },
});
