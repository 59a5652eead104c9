import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keyIdOf } from '../../schemas/agent/agentResultCodec.ts';

export const AgentRoles = { site: 'site', ramdisk: 'ramdisk', node: 'node' } as const;
export type AgentRole = (typeof AgentRoles)[keyof typeof AgentRoles];

/** An agent's signing key: what signs its results and what `agent.register` tells the control plane. */
export interface AgentIdentity {
  privateKey: KeyObject;
  publicKeyRaw: Uint8Array;
  /** base64 of the raw public key: the form `agent.register` carries. */
  publicKeyBase64: string;
  keyId: string;
}

function rawPublicKey(privateKey: KeyObject): Uint8Array {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url');
}

/**
 * Loads `<stateDir>/identity.key` (PKCS8 PEM, mode 0600) or creates it. The key survives restarts so the agent
 * keeps its registered id; it is written to a temp file and renamed so a crash never leaves half a key.
 */
export function loadOrCreateIdentity(stateDir: string): AgentIdentity {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = join(stateDir, 'identity.key');
  let privateKey: KeyObject;
  if (existsSync(file)) {
    privateKey = createPrivateKey(readFileSync(file));
  } else {
    privateKey = generateKeyPairSync('ed25519').privateKey;
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  }
  const publicKeyRaw = rawPublicKey(privateKey);
  return { privateKey, publicKeyRaw, publicKeyBase64: Buffer.from(publicKeyRaw).toString('base64'), keyId: keyIdOf(publicKeyRaw) };
}

/** `site-<siteId>`: one site agent per site. */
export function siteAgentId(siteId: string): string {
  return `site-${siteId}`;
}

/** `ramdisk-<nodeId>-<8 chars of keyId>`: each boot's ramdisk is a distinct agent when its key differs. */
export function ramdiskAgentId(nodeId: string, keyId: string): string {
  return `ramdisk-${nodeId}-${keyId
    .slice(0, 8)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '0')}`;
}
