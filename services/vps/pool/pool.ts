import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { poolEvents, type PoolEvent } from '../../../schemas/vps/events.ts';
import type { PoolState } from '../../../schemas/vps/poolState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

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
      case 'PoolWarmSet':
        return state.exists ? { ...state, warm: { flavors: event.data.flavors, maxSlotAgeSeconds: event.data.maxSlotAgeSeconds } } : state;
    }
  },
});
