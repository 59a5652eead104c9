import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { SecretKind } from './sealed.ts';

/** BMC credentials: the shape a `bmc` secret's value must have, and what a site agent receives in a grant. */
export const BmcCredentialsValue = z.object({ username: z.string().min(1).max(256), password: z.string().min(1).max(1024) }).strict();

/** `PUT /v1/secrets/:secretId` body: the plaintext, sealed by the API before anything else sees it. */
export const PutSecretBody = z
  .object({
    kind: SecretKind,
    value: z.union([z.string().min(1).max(16_384), z.record(z.string(), z.unknown())]),
    description: z.string().max(500).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    // Issues name the path only: zod messages never echo the rejected value, and neither may ours.
    if (body.kind === 'bmc' && !BmcCredentialsValue.safeParse(body.value).success) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: 'a bmc secret must be { username, password }' });
    }
  });
export type PutSecretBody = z.infer<typeof PutSecretBody>;

export const SecretIdParams = z.object({ secretId: ResourceId });

/** A secret as the API shows it: metadata only, never the value or the sealed blob. */
export const SecretView = z.object({
  secretId: z.string(),
  /** What enrollments and agent commands carry instead of the value. */
  ref: z.string(),
  kind: SecretKind,
  version: z.number().int(),
  keyId: z.string(),
  description: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SecretView = z.infer<typeof SecretView>;

/** What `PUT /v1/secrets/:secretId` answers: the stored version's metadata and the log position (`?minSeq=`). */
export const SecretStoredView = z.object({
  secretId: z.string(),
  ref: z.string(),
  kind: SecretKind,
  version: z.number().int(),
  keyId: z.string(),
  seq: z.number().int(),
  duplicate: z.boolean(),
});
export type SecretStoredView = z.infer<typeof SecretStoredView>;
