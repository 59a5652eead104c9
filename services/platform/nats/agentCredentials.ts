import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { fmtCreds, parseCreds } from '@nats-io/jwt';
import { fromSeed, Prefix } from '@nats-io/nkeys';
// nkeys' text encoding (base32 with a CRC-16), which its package entry does not export.
import { Codec } from '@nats-io/nkeys/lib/codec.js';
import { PKCS8_ED25519 } from './connectionIdentity.ts';

/**
 * The agent's half of broker credentials: it makes its own user key and keeps the seed, the control plane only ever
 * sees the public key and answers with a JWT. In the base layer because agents (daemon/) may not import services.
 */

/**
 * Agent side: a fresh user nkey. Send `publicKey` to the control plane; keep `seed` (bytes) to yourself. The public
 * key comes from node's crypto: nkeys' `createUser().getPublicKey()` derives it in JavaScript (tweetnacl), a scalar
 * multiplication that was 5 % of a simulated site's CPU, where every machine boot makes a key.
 */
export function createAgentUserKey(): { publicKey: string; seed: Uint8Array } {
  const raw = randomBytes(32);
  const der = Buffer.concat([PKCS8_ED25519, raw]);
  const spki = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' });
  const seed = Codec.encodeSeed(Prefix.User, raw);
  der.fill(0);
  raw.fill(0);
  // The raw public key is the last 32 bytes of its SubjectPublicKeyInfo.
  return { publicKey: new TextDecoder().decode(Codec.encode(Prefix.User, spki.subarray(spki.length - 32))), seed };
}

/** Agent side: the user key of a seed it kept (an agent that must resend the very join it sent before a power loss). */
export function agentUserKeyOfSeed(seed: Uint8Array): { publicKey: string; seed: Uint8Array } {
  return { publicKey: fromSeed(seed).getPublicKey(), seed };
}

/** Agent side: the `.creds` text for a JWT the control plane issued and the agent's own seed. */
export function credsText(jwt: string, seed: Uint8Array): string {
  return new TextDecoder().decode(fmtCreds(jwt, fromSeed(seed)));
}

/** Agent side: the user key a `.creds` text was issued to (its JWT's subject), which names the agent's own subjects. */
export async function userPublicKeyOfCreds(creds: string): Promise<string> {
  return (await parseCreds(new TextEncoder().encode(creds))).uc.sub;
}
