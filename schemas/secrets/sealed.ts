import { z } from 'zod';

const Base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');

/** What a secret is for; only `bmc` secrets are ever granted to (site) agents. */
export const SecretKind = z.enum(['bmc', 'provider-token', 'generic']);
export type SecretKind = z.infer<typeof SecretKind>;

/**
 * A value sealed with AES-256-GCM under the master key named by `keyId`. The additional authenticated data is the
 * secret id and version (`sealingAad`), so a blob copied onto another secret or version does not open.
 */
export const SealedValue = z
  .object({
    alg: z.literal('A256GCM'),
    /** Which master key sealed it (a short SHA-256 prefix): lets a rotated key tell old blobs from new. */
    keyId: z.string().regex(/^[0-9a-f]{16}$/, 'must be a 16-hex-digit master key id'),
    /** 96-bit random IV. */
    iv: Base64.length(16),
    ciphertext: Base64.max(87_384),
    /** 128-bit GCM tag. */
    tag: Base64.length(24),
  })
  .strict();
export type SealedValue = z.infer<typeof SealedValue>;

/** The authenticated data a secret's value is sealed with: binds the blob to one secret id and version. */
export const sealingAad = (secretId: string, version: number) => `bc.secret/${secretId}/v${version}`;

/** `secret:<id>`: how everything outside the secrets module names a secret. */
export const secretRefOf = (secretId: string) => `secret:${secretId}`;

/** The id a `secret:<id>` reference names; undefined for anything else. */
export function secretIdOf(ref: string): string | undefined {
  return /^secret:([a-z0-9][a-z0-9_-]{0,62})$/.exec(ref)?.[1];
}
