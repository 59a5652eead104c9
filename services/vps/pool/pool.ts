import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { WipeMethod } from '../../../schemas/agent/diskWipe.ts';
import type { PoolAgent, PoolClass } from '../../../schemas/vps/commands.ts';
import { poolEvents, type PoolEvent } from '../../../schemas/vps/events.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export type PoolState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly poolId: string;
      readonly class: PoolClass;
      readonly agent: PoolAgent;
      readonly accountId: string | null;
      readonly siteId: string | null;
      readonly policy: { readonly allowUnverifiedRelease: boolean; readonly provisioningCidrs: readonly string[]; readonly wipeMethod?: WipeMethod };
      /** Tenants that may create instances here, in the order they were offered the pool. */
      readonly offeredTo: readonly string[];
    };

/** A pool of capacity (`bc.evt.vps.pool.<poolId>`): where it comes from and which tenants may use it. */
export const poolAggregate = defineAggregate<PoolState, PoolEvent>({
  module: 'vps',
  type: 'pool',
  initialState: { exists: false },
  catalog: new EventCatalog(poolEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'PoolCreated':
        return { exists: true, ...event.data, offeredTo: [] };
      case 'PoolOffered':
        return state.exists ? { ...state, offeredTo: [...state.offeredTo.filter((t) => t !== event.data.tenantId), event.data.tenantId] } : state;
      case 'PoolWithdrawn':
        return state.exists ? { ...state, offeredTo: state.offeredTo.filter((t) => t !== event.data.tenantId) } : state;
    }
  },
});

export const isOfferedTo = (pool: PoolState, tenantId: string): boolean => pool.exists && pool.offeredTo.includes(tenantId);
