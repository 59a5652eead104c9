import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The user part of a registration subject sent without broker auth: there is no NATS identity to name. */
export const ANONYMOUS_USER = 'anonymous';

/** An agent id is one subject token; ramdisk ids embed the node id and a key prefix, so they run longer than a ResourceId. */
export const AgentId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,120}$/, 'must be a subject-safe agent id');

/** `keyId` of a raw Ed25519 public key: base64url SHA-256, the value a SignedAgentResult carries as `key_id`. */
export function keyIdOf(publicKeyBase64: string): string {
  return createHash('sha256').update(Buffer.from(publicKeyBase64, 'base64')).digest('base64url');
}

/** The agent id a ramdisk agent registers under: `ramdisk-<nodeId>-<first 8 chars of keyId, subject-safe>`. */
export function ramdiskAgentId(nodeId: string, keyId: string): string {
  return `ramdisk-${nodeId}-${keyId
    .slice(0, 8)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '0')}`;
}

/** The agent id of a site's agent. */
export const siteAgentId = (siteId: string) => `site-${siteId}`;

/** The role an agent id names (`site-…`, `ramdisk-…`, `node-…`); undefined for anything else. */
export function agentRoleOf(agentId: string): 'site' | 'ramdisk' | 'node' | undefined {
  const prefix = agentId.slice(0, agentId.indexOf('-'));
  return prefix === 'site' || prefix === 'ramdisk' || prefix === 'node' ? prefix : undefined;
}
