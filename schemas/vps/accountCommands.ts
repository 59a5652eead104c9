import { z } from 'zod';
import { ResourceId } from '../ids.ts';

// A key that names a credential belongs in the sealed token secret, not in config that events carry in the clear.
const CREDENTIAL_KEY = /token|secret|password|passwd|credential|api[-_]?key|private/i;

/**
 * `vps.createProviderAccount`: a cloud account. `config` is provider-specific and non-secret (it is in events and
 * views); the API token is a sealed secret (`PUT /v1/secrets/<tokenSecretId>`) the account only names.
 */
export const CreateProviderAccount = z
  .object({
    accountId: ResourceId,
    providerId: ResourceId,
    region: z.string().min(1).max(100),
    config: z
      .record(z.string().max(100), z.union([z.string().max(2_048), z.number(), z.boolean()]))
      .default({})
      .refine((config) => Object.keys(config).length <= 64, 'at most 64 keys')
      .refine((config) => !Object.keys(config).some((key) => CREDENTIAL_KEY.test(key)), 'credentials go in the token secret, not in config'),
    tokenSecretId: ResourceId,
  })
  .strict();
export type CreateProviderAccount = z.infer<typeof CreateProviderAccount>;
