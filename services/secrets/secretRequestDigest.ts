import { createHmac, hkdfSync } from 'node:crypto';
import { canonicalJson } from '../../schemas/canonicalJson.ts';
import type { MasterKey } from './masterKey.ts';

const digestKey = (masterKey: MasterKey) => Buffer.from(hkdfSync('sha256', masterKey.bytes(), Buffer.alloc(0), 'bc.secret-request-digest/v1', 32));

/**
 * What makes two secrets requests under one `Idempotency-Key` the same: an HMAC of the plaintext request under a key
 * derived from the master key. The sealed payload cannot serve (a fresh IV each time), and a plain hash of a value
 * would let anyone who reads the log test guesses of it.
 */
export function secretRequestDigest(masterKey: MasterKey, request: unknown): string {
  return createHmac('sha256', digestKey(masterKey)).update(canonicalJson(request)).digest('base64url');
}
