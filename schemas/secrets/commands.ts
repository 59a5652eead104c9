import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { SealedValue, SecretKind } from './sealed.ts';

/**
 * `secrets.put`: store a new version of a secret. The value arrives already sealed (the HTTP edge seals it), because
 * commands travel over `bc.cmd.*` where anyone subscribed to `bc.>` reads them. `version` is the version the value
 * was sealed for and must be the next one; otherwise the command is refused with CONCURRENCY_CONFLICT and the sender
 * seals again for the new version.
 */
export const PutSecret = z
  .object({
    secretId: ResourceId,
    kind: SecretKind,
    version: z.number().int().positive(),
    sealed: SealedValue,
    description: z.string().max(500).optional(),
  })
  .strict();
export type PutSecret = z.infer<typeof PutSecret>;

/** `secrets.delete`: the secret stops resolving; its id keeps counting versions if it is put again. */
export const DeleteSecret = z.object({ secretId: ResourceId }).strict();
export type DeleteSecret = z.infer<typeof DeleteSecret>;
