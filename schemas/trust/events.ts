import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';

const AgentKey = z.object({
  agentId: z.string(),
  role: z.enum(['site', 'ramdisk', 'node']),
  siteId: z.string(),
  nodeId: z.string().nullable(),
  /** base64 of the raw 32-byte Ed25519 public key. */
  publicKey: z.string(),
  /** base64url SHA-256 of the raw public key: what a SignedAgentResult names as `key_id`. */
  keyId: z.string(),
});

export const AgentRegistered = defineEvent('AgentRegistered', AgentKey);
export const AgentKeyRotated = defineEvent('AgentKeyRotated', AgentKey.extend({ previousKeyId: z.string() }));

export const trustEvents = [AgentRegistered, AgentKeyRotated] as const;
export type TrustEvent = EventOf<(typeof trustEvents)[number]>;
