import { createHash } from 'node:crypto';

/** `keyId` of a raw Ed25519 public key: base64url SHA-256, the value a SignedAgentResult carries as `key_id`. */
export function keyIdOf(publicKeyBase64: string): string {
  return createHash('sha256').update(Buffer.from(publicKeyBase64, 'base64')).digest('base64url');
}

/** The agent id a ramdisk agent registers under: `ramdisk-<nodeId>-<first 8 chars of keyId, subject-safe>`. */
export function ramdiskAgentId(nodeId: string, keyId: string): string {
  return `ramdisk-${nodeId}-${keyId.slice(0, 8).toLowerCase().replace(/[^a-z0-9]/g, '0')}`;
}

/** The agent id of a site's agent. */
export const siteAgentId = (siteId: string) => `site-${siteId}`;
