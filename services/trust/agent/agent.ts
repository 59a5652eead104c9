import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { agentEvents, type AgentEvent } from '../../../schemas/trust/events.ts';
import { defineAggregate } from '../../commands/commandDefinition.ts';

export type AgentState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly agentId: string;
      readonly role: 'site' | 'ramdisk' | 'node';
      readonly siteId: string;
      readonly nodeId: string | null;
      readonly publicKey: string;
      readonly keyId: string;
    };

/** A registered agent and its current signing key (`bc.evt.trust.agent.<agentId>`). */
export const agentAggregate = defineAggregate<AgentState, AgentEvent>({
  module: 'trust',
  type: 'agent',
  initialState: { exists: false },
  catalog: new EventCatalog(agentEvents),
  evolve(_state, event) {
    const { agentId, role, siteId, nodeId, publicKey, keyId } = event.data;
    switch (event.type) {
      case 'AgentRegistered':
      case 'AgentKeyRotated':
        return { exists: true, agentId, role, siteId, nodeId, publicKey, keyId };
    }
  },
});
