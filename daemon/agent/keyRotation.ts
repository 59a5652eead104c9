import type { NatsConnection } from '@nats-io/transport-node';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Logger } from '../../services/platform/logger.ts';
import type { AgentKeyring } from './agentKeyring.ts';
import { syncFolder } from './durableFile.ts';
import { identityKeyFile, identityOf, writeKeyFile, type AgentIdentity } from './identity.ts';
import { retryableCodes, rotationSignature, sendRegistration } from './registration.ts';

/** Where a rotation keeps the new key until the control plane accepted it: `<stateDir>/identity.key.next`. */
export const pendingKeyFile = (stateDir: string) => join(stateDir, 'identity.key.next');

/** What a long-lived agent needs to replace its own key. */
export interface KeyRotationDeps {
  nc: NatsConnection;
  agent: { agentId: string; role: 'site' | 'node'; siteId: string; nodeId?: string };
  keyring: AgentKeyring;
  stateDir: string;
  /** Broker mode: the NATS user key the agent's credentials were issued to (its own registration subject). */
  userPublicKey?: string;
  log: Logger;
}

/** `rotated`: the new key is registered, on disk and signing. `refused`: the control plane said no; the old key stays. */
export type RotationOutcome = 'rotated' | 'refused';

/** True when a rotation was interrupted (a crash, no answer) and its new key waits in `identity.key.next`. */
export const rotationPending = (stateDir: string) => existsSync(pendingKeyFile(stateDir));

/**
 * Replaces the agent's key, in an order a crash at any point survives:
 * 1. the new key goes to `identity.key.next` (atomic, 0600), or the one an interrupted rotation left there is reused;
 * 2. `agent.register` with the new key and the current key's `rotationSignature` on the agent's own subject;
 * 3. accepted (a no-op too: the control plane took this key before a crash) → `identity.key.next` is renamed over
 *    `identity.key` and the keyring signs with it; refused → `identity.key.next` is removed, the current key stays.
 * Unanswered, it throws the `UNAVAILABLE` (or other retryable) PlatformError and keeps `identity.key.next`: until
 * an answer, either key may be the registered one, so neither is thrown away.
 */
export async function rotateKey(deps: KeyRotationDeps, options: { timeoutMs?: number } = {}): Promise<RotationOutcome> {
  const { agent, keyring, stateDir, log } = deps;
  const file = pendingKeyFile(stateDir);
  const current = keyring.snapshot();
  let next: AgentIdentity;
  if (existsSync(file)) {
    next = identityOf(createPrivateKey(readFileSync(file)));
  } else {
    next = identityOf(generateKeyPairSync('ed25519').privateKey);
    writeKeyFile(file, next.privateKey);
  }
  const registration = { ...agent, publicKey: next.publicKeyBase64, rotationSignature: rotationSignature(agent.agentId, current, next) };
  try {
    await sendRegistration(deps.nc, registration, {
      ...(deps.userPublicKey ? { userPublicKey: deps.userPublicKey } : {}),
      timeoutMs: options.timeoutMs ?? 5_000,
    });
  } catch (err) {
    if (!(err instanceof PlatformError) || retryableCodes.has(err.code)) throw err;
    rmSync(file, { force: true });
    syncFolder(stateDir);
    log.error({ agentId: agent.agentId, code: err.code, keyId: current.keyId }, 'key rotation refused; the current key stays');
    return 'refused';
  }
  renameSync(file, identityKeyFile(stateDir));
  syncFolder(stateDir);
  keyring.replace(next);
  log.info({ agentId: agent.agentId, previousKeyId: current.keyId, keyId: next.keyId }, 'agent key rotated');
  return 'rotated';
}
