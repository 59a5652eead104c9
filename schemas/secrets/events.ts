import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { SealedValue, SecretKind } from './sealed.ts';

/** A secret's new version. Only the sealed value is stored; the plaintext never reaches the log. */
export const SecretStored = defineEvent(
  'SecretStored',
  z.object({
    secretId: z.string(),
    kind: SecretKind,
    version: z.number().int().positive(),
    sealed: SealedValue,
    keyId: z.string(),
    description: z.string().nullable(),
  }),
);
export const SecretDeleted = defineEvent('SecretDeleted', z.object({ secretId: z.string(), version: z.number().int().positive() }));

export const secretEvents = [SecretStored, SecretDeleted] as const;
export type SecretEvent = EventOf<(typeof secretEvents)[number]>;
