import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_BYTES = 32;
const BEARER = /^bct_([a-z0-9][a-z0-9_-]{0,62})_([A-Za-z0-9_-]{43})$/;

/** A bearer token as issued: `bct_<tokenId>_<secret>`, so the API finds the token by id and compares one hash. */
export interface MintedToken {
  readonly token: string;
  readonly secretHash: string;
}

/**
 * SHA-256 of the secret. A slow password hash (scrypt, argon2) protects guessable secrets; these are 256 random
 * bits, out of reach of any guessing, so one fast hash suffices and keeps authentication off the request's CPU bill.
 */
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** A new token for `tokenId`: 32 random bytes, base64url (43 characters). */
export function mintToken(tokenId: string): MintedToken {
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { token: `bct_${tokenId}_${secret}`, secretHash: hashSecret(secret) };
}

/** The token id and secret of a bearer token; undefined for anything not shaped like one. */
export function parseToken(token: string): { tokenId: string; secret: string } | undefined {
  const match = BEARER.exec(token);
  return match ? { tokenId: match[1]!, secret: match[2]! } : undefined;
}

/** Constant-time comparison of a presented secret with the stored hash, so timing tells nothing about the hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
