import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { AgentId } from './agentIds.ts';

/**
 * A join token lets one machine or site agent join exactly once: `bcj_<tokenId>_<secret>`. The id is public (it
 * names the aggregate `bc.evt.trust.joinToken.<tokenId>`); the secret (32 random bytes, base64url) exists only at
 * the issuer and in the joining agent. The control plane keeps the SHA-256 of the secret: the secret has 256 bits
 * of entropy, so a plain hash cannot be reversed by guessing and no slow KDF is needed.
 */
export const JoinTokenId = z.string().regex(/^jt-[a-z0-9]{20}$/, 'must be jt- and 20 chars of a-z, 0-9');
export type JoinTokenId = z.infer<typeof JoinTokenId>;

/** Hex SHA-256 of a token's secret: all the control plane ever stores. */
export const JoinTokenHash = z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256');

/** Who may join with a token: a PXE-booted ramdisk or an installed node agent (both of one node), or a site agent. */
export const JoinRole = z.enum(['ramdisk', 'node', 'site']);
export type JoinRole = z.infer<typeof JoinRole>;

/** What the joining machine must report, checked at join against the request and the node's Redfish inventory. */
export const JoinExpectation = z
  .object({
    productUuid: z
      .guid()
      .transform((s) => s.toLowerCase())
      .optional(),
  })
  .strict();
export type JoinExpectation = z.infer<typeof JoinExpectation>;

/**
 * How a machine proves it is the one a join token was minted for, named on the token when it is made:
 * - `issued`: made by the control plane or an operator; it may expect a product UUID, and when it does the joining
 *   machine must report it and the node's Redfish inventory must not say otherwise.
 * - `provisioned`: made by a step (a plugin's or a built-in one) for a machine it provisions, and handed to that
 *   machine through something the step built (an ISO, a seed). Whoever reads that artefact holds the token, so the
 *   token alone proves nothing: it is made only with an expectation and joins only when the machine meets it.
 *   A provisioned token without one is refused when minted (`JOIN_EXPECTATION_REQUIRED`) and, should one exist, at join.
 */
export const JoinAttestorName = z.enum(['issued', 'provisioned']);
export type JoinAttestorName = z.infer<typeof JoinAttestorName>;

/** At most a week: a token is meant to be used soon after it is made, and single-use tokens should not linger. */
export const MAX_JOIN_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
const Expiry = {
  /** ISO time after which the token is refused. */
  expiresAt: z.iso.datetime().optional(),
  /** Or seconds from the command's time (default one hour). */
  ttlSeconds: z.number().int().positive().max(MAX_JOIN_TOKEN_TTL_SECONDS).optional(),
};

/**
 * `pki.createJoinToken`: records a token minted by the issuer (`mintJoinToken`), which sends only its hash. `nodeId`
 * is required for `ramdisk`/`node` tokens and refused for `site` tokens.
 */
export const CreateJoinToken = z
  .object({
    tokenId: JoinTokenId,
    hash: JoinTokenHash,
    role: JoinRole,
    siteId: ResourceId,
    nodeId: ResourceId.optional(),
    ...Expiry,
    expect: JoinExpectation.optional(),
    /** How the joiner proves it is the machine (`schemas/trust/joinAttestors.ts`); default `issued`. */
    attestor: JoinAttestorName.optional(),
  })
  .strict()
  .refine((c) => (c.role === 'site') === (c.nodeId === undefined), {
    message: 'nodeId is required for ramdisk/node tokens and not allowed for site tokens',
    path: ['nodeId'],
  })
  .refine((c) => c.expiresAt === undefined || c.ttlSeconds === undefined, { message: 'give expiresAt or ttlSeconds, not both', path: ['ttlSeconds'] });
export type CreateJoinToken = z.infer<typeof CreateJoinToken>;

/** `siteTokens.create`: a join token for a site's agent (`bcd site --join-token`). */
export const CreateSiteToken = z
  .object({ tokenId: JoinTokenId, hash: JoinTokenHash, siteId: ResourceId, ...Expiry })
  .strict()
  .refine((c) => c.expiresAt === undefined || c.ttlSeconds === undefined, { message: 'give expiresAt or ttlSeconds, not both', path: ['ttlSeconds'] });
export type CreateSiteToken = z.infer<typeof CreateSiteToken>;

/**
 * `pki.useJoinToken` (join service only): spends a token for one agent, or records why not. `presentedHash` is the
 * hash of the secret the agent presented; the token itself never travels in a command. `tokenId` is absent when
 * the presented text was not a token at all (the refusal is then recorded under `unidentified`).
 */
export const UseJoinToken = z
  .object({
    tokenId: JoinTokenId.optional(),
    presentedHash: JoinTokenHash.optional(),
    role: JoinRole,
    siteId: ResourceId,
    nodeId: ResourceId.optional(),
    agentId: AgentId,
    /** The key the joiner presents: the one key a spent token can authorise (`agent.register`). */
    keyId: z.string().max(64).optional(),
    productUuid: z
      .guid()
      .transform((s) => s.toLowerCase())
      .optional(),
    /**
     * False when the join service counts this joiner's refusals instead of recording each (`RefusalTally`): a refusal
     * is then answered with its code and appends nothing.
     */
    recordRefusal: z.boolean().default(true),
  })
  .strict();
export type UseJoinToken = z.infer<typeof UseJoinToken>;

/** Aggregate id under which refusals of text that names no token are audited. */
export const UNIDENTIFIED_JOIN = 'unidentified';

/** Why a join was refused: each is an error code (`schemas/errorCodes.ts`) the joining agent receives. */
export const JoinRefusal = z.enum([
  'JOIN_TOKEN_MALFORMED',
  'JOIN_TOKEN_UNKNOWN',
  'JOIN_TOKEN_INVALID',
  'JOIN_TOKEN_USED',
  'JOIN_TOKEN_EXPIRED',
  'JOIN_ROLE_MISMATCH',
  'JOIN_SCOPE_MISMATCH',
  'JOIN_EXPECTATION_FAILED',
]);
export type JoinRefusal = z.infer<typeof JoinRefusal>;

const TOKEN = /^bcj_(jt-[a-z0-9]{20})_([A-Za-z0-9_-]{43})$/;

/** The id and secret of a presented token, or undefined when the text is not shaped like one. */
export function parseJoinToken(token: string): { tokenId: string; secret: string } | undefined {
  const match = TOKEN.exec(token);
  return match ? { tokenId: match[1]!, secret: match[2]! } : undefined;
}

export function formatJoinToken(tokenId: string, secret: string): string {
  return `bcj_${tokenId}_${secret}`;
}

export function hashJoinSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex hashes, so answer timing says nothing about how close a guess was. */
export function sameJoinHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A fresh token: the text to hand to the joiner once, and what the control plane may store. */
export function generateJoinToken(): { token: string; tokenId: string; hash: string } {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const tokenId = `jt-${Array.from(randomBytes(20), (b) => alphabet[b % 36]).join('')}`;
  const secret = randomBytes(32).toString('base64url');
  return { token: formatJoinToken(tokenId, secret), tokenId, hash: hashJoinSecret(secret) };
}
