import { z } from 'zod';
import { Problem } from '../api.ts';
import { ResourceId } from '../ids.ts';
import { SecretRef } from '../ids.ts';
import { AgentId } from '../trust/agentIds.ts';

const Base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');

/** How old (or how far in the future) a grant request may be before it is refused as GRANT_STALE. */
export const GRANT_REQUEST_MAX_AGE_MS = 60_000;

/**
 * What an agent asks for on `bc.secrets.grant`: the secret `ref` it needs for `nodeId`, and a fresh X25519 public
 * key the answer is encrypted to. Signed (Ed25519) with the agent's registered key.
 */
export const SecretGrantRequest = z
  .object({
    agentId: AgentId,
    nodeId: ResourceId,
    ref: SecretRef,
    /** base64 of the raw 32-byte X25519 public key, used for this one request. */
    ephemeralPublicKey: z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 32-byte X25519 public key'),
    issuedAt: z.iso.datetime(),
    /** For a secret a command names (a `site.httpProxy` secret header): the executor's ticket from that command. */
    ticket: z.string().max(2_048).optional(),
  })
  .strict();
export type SecretGrantRequest = z.infer<typeof SecretGrantRequest>;

/** The wire form: the request's exact JSON bytes (base64), so the signature covers bytes, not a re-serialisation. */
export const SignedSecretGrantRequest = z
  .object({
    request: Base64.max(4_096),
    signature: Base64.max(128),
    /** The signing key's id (`keyIdOf` of the registered Ed25519 key). */
    keyId: z.string().max(64),
  })
  .strict();
export type SignedSecretGrantRequest = z.infer<typeof SignedSecretGrantRequest>;

/**
 * A granted value, readable only with the request's ephemeral private key: X25519 with `serverPublicKey`, HKDF-SHA256
 * (salt = SHA-256 of the request bytes), AES-256-GCM whose authenticated data binds ref, node, agent and `expiresAt`.
 * The agent must forget the value at `expiresAt`.
 */
export const SecretGrant = z.object({
  ref: z.string(),
  nodeId: z.string(),
  expiresAt: z.iso.datetime(),
  serverPublicKey: Base64,
  iv: Base64,
  ciphertext: Base64,
  tag: Base64,
});
export type SecretGrant = z.infer<typeof SecretGrant>;

/** The reply on the request's inbox; a refusal carries a stable code (also in the `Bc-Error-Code` header). */
export const SecretGrantReply = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), grant: SecretGrant }),
  z.object({ ok: z.literal(false), error: Problem }),
]);
export type SecretGrantReply = z.infer<typeof SecretGrantReply>;
