import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { authEvents, type AuthEvent } from '../../../schemas/auth/events.ts';
import type { Role } from '../../../schemas/auth/roles.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export type TokenState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly tokenId: string;
      readonly role: Role;
      readonly tenantId: string | null;
      readonly description: string | null;
      readonly expiresAt: string | null;
      readonly secretHash: string;
      readonly revoked: boolean;
    };

/** An API token (`bc.evt.auth.token.<tokenId>`): role, tenant, expiry and the hash of its secret. */
export const tokenAggregate = defineAggregate<TokenState, AuthEvent>({
  module: 'auth',
  type: 'token',
  initialState: { exists: false },
  catalog: new EventCatalog(authEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'ApiTokenCreated':
        return { exists: true, revoked: false, ...event.data };
      case 'ApiTokenRevoked':
        return state.exists ? { ...state, revoked: true } : state;
    }
  },
});
