import { aggregateRef } from '../aggregateRef.ts';

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
      /** Join tokens that authorised a key of this agent: each authorises once, so an old one cannot bring its key back. */
      readonly joinTokenIds: readonly string[];
      /** The key a pending rotation request is about (null or absent: none pending). */
      readonly rotationRequestedFor?: string | null;
    };

/** What another module may read of an agent's registration (`bc.evt.trust.agent.<agentId>`). */
export const agentRef = aggregateRef<AgentState>('trust', 'agent');
