import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keyIdOf } from '../../schemas/agent/agentResultCodec.ts';
import { writeFileDurably } from './durableFile.ts';

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

/** Where the agent's key lives: `<stateDir>/identity.key`. */
export const identityKeyFile = (stateDir: string) => join(stateDir, 'identity.key');

/** The identity a private key makes (public key, key id). */
export function identityOf(privateKey: KeyObject): AgentIdentity {
  const publicKeyRaw = rawPublicKey(privateKey);
  return { privateKey, publicKeyRaw, publicKeyBase64: Buffer.from(publicKeyRaw).toString('base64'), keyId: keyIdOf(publicKeyRaw) };
}

/** Writes a private key (PKCS8 PEM, mode 0600) to `file` durably: a crash or power loss leaves the old key or the new one. */
export function writeKeyFile(file: string, privateKey: KeyObject): void {
  writeFileDurably(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
}

/**
 * Loads `<stateDir>/identity.key` or creates it. The key survives restarts so the agent keeps its registered id. A
 * rotation replaces it only once the control plane accepted the new key (`keyRotation.ts`).
 */
export function loadOrCreateIdentity(stateDir: string): AgentIdentity {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = identityKeyFile(stateDir);
  if (existsSync(file)) return identityOf(createPrivateKey(readFileSync(file)));
  const privateKey = generateKeyPairSync('ed25519').privateKey;
  writeKeyFile(file, privateKey);
  return identityOf(privateKey);
}

// The contract names agents; the daemon uses the same ids (one definition, in schemas/).
export { ramdiskAgentId, siteAgentId } from '../../schemas/trust/agentIds.ts';
