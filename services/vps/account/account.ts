import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { accountEvents, type AccountEvent } from '../../../schemas/vps/events.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** No token here, ever: only the id of the sealed secret that holds it. */
export type AccountState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly accountId: string;
      readonly providerId: string;
      readonly region: string;
      readonly config: Readonly<Record<string, string | number | boolean>>;
      readonly tokenSecretId: string;
    };

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
