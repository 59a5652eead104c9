import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { Role } from './roles.ts';

export const TokenIdParams = z.object({ tokenId: ResourceId });

/** A token as the API shows it: never the secret, nor its hash. */
export const TokenView = z.object({
  tokenId: z.string(),
  role: Role,
  tenantId: z.string().nullable(),
  description: z.string().nullable(),
  expiresAt: z.string().nullable(),
  revoked: z.boolean(),
  createdAt: z.string(),
  /** The actor that created it (`token:<id>`, or `bootstrap` for the first admin token). */
  createdBy: z.string(),
});
export type TokenView = z.infer<typeof TokenView>;

/** What `POST /v1/tokens` answers: the bearer token, in the only response that will ever hold it. */
export const CreatedTokenView = z.object({
  tokenId: z.string(),
  role: Role,
  tenantId: z.string().nullable(),
  /** `bct_<tokenId>_<secret>`: send as `Authorization: Bearer <token>`. Not stored anywhere; keep it. */
  token: z.string(),
  seq: z.number().int(),
});
export type CreatedTokenView = z.infer<typeof CreatedTokenView>;

/** `GET /v1/session`: who the bearer token is (what a console needs to show the right actions). */
export const SessionView = TokenView.pick({ tokenId: true, role: true, tenantId: true });
export type SessionView = z.infer<typeof SessionView>;
