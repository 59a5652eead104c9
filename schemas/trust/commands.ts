import { z } from 'zod';
import { ResourceId } from '../ids.ts';

/** An agent id is one subject token; ramdisk ids embed the node id and a key prefix, so they run longer than a ResourceId. */
export const AgentId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,120}$/, 'must be a subject-safe agent id');

export const AgentRole = z.enum(['site', 'ramdisk', 'node']);
export type AgentRole = z.infer<typeof AgentRole>;

/**
 * `agent.register`: an agent announces its Ed25519 public key (base64 of the 32 raw bytes). Site agents are
 * `site-<siteId>`; ramdisk agents `ramdisk-<nodeId>-<keyId prefix>` (see `ramdiskAgentId`). Re-sending the same key
 * is a no-op; a different key for a known agent rotates it.
 */
export const RegisterAgent = z
  .object({
    agentId: AgentId,
    role: AgentRole,
    siteId: ResourceId,
    nodeId: ResourceId.optional(),
    publicKey: z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 32-byte Ed25519 public key'),
  })
  .strict();
export type RegisterAgent = z.infer<typeof RegisterAgent>;
