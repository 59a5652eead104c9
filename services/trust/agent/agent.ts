import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { agentEvents, type AgentEvent } from '../../../schemas/trust/events.ts';
import type { AgentState } from '../../../schemas/trust/agentState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export type { AgentState } from '../../../schemas/trust/agentState.ts';

/** A registered agent and its current signing key (`bc.evt.trust.agent.<agentId>`). */
export const agentAggregate = defineAggregate<AgentState, AgentEvent>({
  module: 'trust',
  type: 'agent',
  initialState: { exists: false },
  catalog: new EventCatalog(agentEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'AgentRegistered':
      case 'AgentKeyRotated': {
        const { agentId, role, siteId, nodeId, publicKey, keyId, joinTokenId } = event.data;
        const spent = state.exists ? state.joinTokenIds : [];
        // A new key settles any pending rotation request (it named the old key).
        return {
          exists: true,
          agentId,
          role,
          siteId,
          nodeId,
          publicKey,
          keyId,
          joinTokenIds: joinTokenId ? [...spent, joinTokenId] : spent,
          rotationRequestedFor: null,
        };
      }
      case 'AgentKeyRotationRequested':
        return state.exists ? { ...state, rotationRequestedFor: event.data.keyId } : state;
      case 'AgentRegistrationRefused':
        return state;
    }
  },
});
