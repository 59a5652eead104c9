import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { Role } from './roles.ts';

/** A token was created. Only the secret's hash is stored; the token itself was shown once, to its creator. */
export const ApiTokenCreated = defineEvent(
  'ApiTokenCreated',
  z.object({
    tokenId: z.string(),
    role: Role,
    tenantId: z.string().nullable(),
    description: z.string().nullable(),
    expiresAt: z.string().nullable(),
    secretHash: z.string(),
  }),
);
export const ApiTokenRevoked = defineEvent('ApiTokenRevoked', z.object({ tokenId: z.string() }));

export const authEvents = [ApiTokenCreated, ApiTokenRevoked] as const;
export type AuthEvent = EventOf<(typeof authEvents)[number]>;
