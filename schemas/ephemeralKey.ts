import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

/**
 * The one-request X25519 key pair both sealed answers use (secret grants, join answers): shared by schemas/secrets and
 * schemas/trust, so it lives beside neither.
 */
export function ephemeralKeyPair(): { privateKey: KeyObject; publicKeyBase64: string } {
  const { privateKey } = generateKeyPairSync('x25519');
  const raw = Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
  return { privateKey, publicKeyBase64: raw.toString('base64') };
}
