import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { AccountState } from '../../../schemas/vps/accountState.ts';
import { accountEvents, type AccountEvent } from '../../../schemas/vps/events.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** A cloud provider account (`bc.evt.vps.account.<accountId>`). */
export const accountAggregate = defineAggregate<AccountState, AccountEvent>({
  module: 'vps',
  type: 'account',
  initialState: { exists: false },
  catalog: new EventCatalog(accountEvents),
  evolve(_state, event) {
    switch (event.type) {
      case 'ProviderAccountCreated':
        return { exists: true, ...event.data };
    }
  },
});
