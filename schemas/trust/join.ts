import { z } from 'zod';
import { Problem } from '../api.ts';
import { ResourceId } from '../ids.ts';
import { SealedJoinAnswer } from './joinReplySeal.ts';

/**
 * A join request on `bc.join.<role>` (role `ramdisk`, `node` or `site`), sent by an agent holding a join token and
 * nothing else. `publicKey` is the agent's Ed25519 result-signing key (base64 of 32 raw bytes), `userPublicKey` the
 * public nkey of the NATS user it made for itself (broker mode; the seed never leaves the agent). `siteId`/`nodeId`
 * are what the agent was started for; they must be the token's.
 */
export const JoinRequest = z
  .object({
    token: z.string().max(200),
    publicKey: z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 32-byte Ed25519 public key'),
    userPublicKey: z
      .string()
      .regex(/^U[A-Z2-7]{55}$/, 'must be a NATS user public nkey')
      .optional(),
    siteId: ResourceId,
    nodeId: ResourceId.optional(),
    /** SMBIOS system UUID as the machine reads it (`/sys/class/dmi/id/product_uuid`); checked when the token expects one. */
    productUuid: z.guid().optional(),
    /** A one-request X25519 public key (base64 of 32 bytes): the accepted answer is sealed to it (`sealJoinAnswer`). */
    replyKey: z
      .string()
      .regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 32-byte X25519 public key')
      .optional(),
  })
  .strict();
export type JoinRequest = z.infer<typeof JoinRequest>;

/**
 * The answer: the agent's id and, in broker mode, its user JWT (useless without the agent's seed), the inbox prefix it
 * must connect with and the durable consumer made for it. Sealed to the request's `replyKey` when it named one.
 */
export const JoinAccepted = z.object({
  ok: z.literal(true),
  agentId: z.string(),
  jwt: z.string().optional(),
  /** Seconds since the epoch when the JWT expires. */
  expiresAt: z.number().optional(),
  inboxPrefix: z.string().optional(),
  durable: z.string().optional(),
});
export type JoinAccepted = z.infer<typeof JoinAccepted>;

/** An accepted answer sealed to the joiner's `replyKey`: other joiners, who share the join inboxes, cannot read it. */
export const SealedJoinAccepted = z.object({ ok: z.literal(true), sealed: SealedJoinAnswer }).strict();

export const JoinReply = z.union([SealedJoinAccepted, JoinAccepted, z.object({ ok: z.literal(false), error: Problem })]);
export type JoinReply = z.infer<typeof JoinReply>;
