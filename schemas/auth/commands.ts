import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { Role, TenantId } from './roles.ts';

/** SHA-256 of a token's secret, hex: all the log ever holds of a token. */
export const SecretHash = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 hex digits (SHA-256)');

/** The role fields every token carries; `tenantId` is required for, and only allowed with, the `tenant` role. */
const roleFields = {
  role: Role,
  tenantId: TenantId.optional(),
  description: z.string().max(500).optional(),
  /** ISO time after which the token is refused; unset: until revoked. */
  expiresAt: z.iso.datetime().optional(),
};

const tenantMatchesRole = (value: { role: Role; tenantId?: string | undefined }, ctx: z.RefinementCtx) => {
  if (value.role === 'tenant' && value.tenantId === undefined) ctx.addIssue({ code: 'custom', path: ['tenantId'], message: 'a tenant token needs a tenantId' });
  if (value.role !== 'tenant' && value.tenantId !== undefined)
    ctx.addIssue({ code: 'custom', path: ['tenantId'], message: 'only a tenant token has a tenantId' });
};

/**
 * `auth.createToken`: a new API token. The secret is generated at the HTTP edge and returned to the caller once; the
 * command carries only its hash, because commands travel over `bc.cmd.*` and end in the log.
 */
export const CreateToken = z
  .object({ tokenId: ResourceId, secretHash: SecretHash, ...roleFields })
  .strict()
  .superRefine(tenantMatchesRole);
export type CreateToken = z.infer<typeof CreateToken>;

/** `auth.revokeToken`: the token is refused from now on; its id is never reused. */
export const RevokeToken = z.object({ tokenId: ResourceId }).strict();
export type RevokeToken = z.infer<typeof RevokeToken>;

/** `POST /v1/tokens` body: the token's role; the API makes the secret. `tokenId` defaults to a random one. */
export const CreateTokenBody = z
  .object({ tokenId: ResourceId.optional(), ...roleFields })
  .strict()
  .superRefine(tenantMatchesRole);
export type CreateTokenBody = z.infer<typeof CreateTokenBody>;
