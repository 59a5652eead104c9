import { fmtCreds, parseCreds } from '@nats-io/jwt';
import { createUser, fromSeed } from '@nats-io/nkeys';

/**
 * The agent's half of broker credentials: it makes its own user key and keeps the seed, the control plane only ever
 * sees the public key and answers with a JWT. In the base layer because agents (daemon/) may not import services.
 */

/** Agent side: a fresh user nkey. Send `publicKey` to the control plane; keep `seed` (bytes) to yourself. */
export function createAgentUserKey(): { publicKey: string; seed: Uint8Array } {
  const key = createUser();
  return { publicKey: key.getPublicKey(), seed: key.getSeed() };
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
