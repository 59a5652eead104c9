import { ed25519 } from '@noble/curves/ed25519.js';
import { z } from 'zod';

/** An Ed25519 signature as the API carries it: 64 bytes, base64. */
export const Ed25519Signature = z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'must be a base64 64-byte Ed25519 signature');

/**
 * Why `publicKey` (base64 of 32 bytes) cannot be a key the platform trusts signatures of (approvers, module
 * publishers), or undefined when it can. A small-order point (the all-zero key among them) verifies signatures that
 * prove nothing about any private key; a non-canonical or off-curve encoding is no key at all.
 */
export function unusableEd25519Key(publicKey: string): string | undefined {
  const raw = Buffer.from(publicKey, 'base64');
  if (raw.length !== 32) return 'publicKey must be 32 raw bytes';
  let point;
  try {
    point = ed25519.Point.fromBytes(raw);
  } catch {
    return 'publicKey is not a canonical Ed25519 point';
  }
  if (point.isSmallOrder() || !point.isTorsionFree()) return 'publicKey is a small-order (or mixed-order) point';
  return undefined;
}
