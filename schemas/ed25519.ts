import { z } from 'zod';

/** An Ed25519 signature as the API carries it: 64 bytes, base64. */
export const Ed25519Signature = z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'must be a base64 64-byte Ed25519 signature');
