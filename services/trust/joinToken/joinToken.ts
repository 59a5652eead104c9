import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { JoinAttestorName } from '../../../schemas/trust/joinTokens.ts';
import type { JoinExpectation, JoinRole } from '../../../schemas/trust/joinTokens.ts';
import { joinTokenEvents, type JoinTokenEvent } from '../../../schemas/trust/events.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export type JoinTokenState =
  | { readonly exists: false; readonly refusals: number }
  | {
      readonly exists: true;
      readonly tokenId: string;
      readonly hash: string;
      readonly role: JoinRole;
      readonly siteId: string;
      readonly nodeId: string | null;
      readonly expiresAt: string;
      readonly expect: JoinExpectation | null;
      readonly attestor: JoinAttestorName;
      /** The agent that spent it; a used token is refused for good. */
      readonly usedBy: string | null;
      /** The key it was spent for (null before it is used, or on an event older than the field). */
      readonly usedForKeyId: string | null;
      readonly refusals: number;
    };

/** A single-use join token (`bc.evt.trust.joinToken.<tokenId>`): its hash, scope, expiry, and whether it is spent. */
export const joinTokenAggregate = defineAggregate<JoinTokenState, JoinTokenEvent>({
  module: 'trust',
  type: 'joinToken',
  initialState: { exists: false, refusals: 0 },
  catalog: new EventCatalog(joinTokenEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'JoinTokenCreated':
        return { exists: true, ...event.data, attestor: event.data.attestor ?? 'issued', usedBy: null, usedForKeyId: null, refusals: state.refusals };
      case 'JoinTokenUsed':
        return state.exists ? { ...state, usedBy: event.data.agentId, usedForKeyId: event.data.keyId ?? null } : state;
      case 'JoinRefused':
        return { ...state, refusals: state.refusals + 1 };
    }
  },
});
