import { isIP } from 'node:net';
import { z } from 'zod';
import { WipeMethod } from '../agent/diskWipe.ts';
import { ResourceId } from '../ids.ts';

/** The four quota dimensions; an instance counts 1 and its flavor's size. */
export const Resources = z
  .object({
    instances: z.number().int().nonnegative(),
    vcpus: z.number().int().nonnegative(),
    memoryMib: z.number().int().nonnegative(),
    diskGib: z.number().int().nonnegative(),
  })
  .strict();
export type Resources = z.infer<typeof Resources>;

/** The dimensions in the order quota checks and messages name them. */
export const resourceDimensions = ['instances', 'vcpus', 'memoryMib', 'diskGib'] as const;
export type ResourceDimension = (typeof resourceDimensions)[number];

/** How large a cloud-init user data blob may be (bytes of its UTF-8 text), the smallest cap common clouds allow. */
export const USER_DATA_MAX_BYTES = 32_768;

/**
 * An OpenSSH public key line (`<type> <base64> [comment]`). Checked roughly: the type is one OpenSSH knows and the
 * key body is base64; a private key pasted by mistake is refused here, before it reaches the log.
 */
export const SshPublicKey = z
  .string()
  .max(8_192)
  .regex(
    /^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]{16,}={0,3}( [^\r\n]*)?$/,
    'must be an OpenSSH public key line ("ssh-ed25519 AAAA... comment")',
  );

/** An IPv4 or IPv6 CIDR such as `10.0.0.0/24` or `2001:db8::/64`. */
export const Cidr = z.string().refine((value) => {
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || !address || !prefix || !/^\d{1,3}$/.test(prefix)) return false;
  const family = isIP(address);
  return family !== 0 && Number(prefix) <= (family === 4 ? 32 : 128);
}, 'must be a CIDR (address/prefix)');

/** `vps.createTenant`: someone who may own VPS instances; its quota starts at zero. */
export const CreateTenant = z.object({ tenantId: ResourceId, name: z.string().min(1).max(200) }).strict();
export type CreateTenant = z.infer<typeof CreateTenant>;

/** `vps.setQuota`: the tenant's limits. Lowering them below current usage refuses only new instances. */
export const SetQuota = Resources.extend({ tenantId: ResourceId }).strict();
export type SetQuota = z.infer<typeof SetQuota>;

/**
 * `vps.createInstance`, decided on the tenant: the accepted `InstanceRequested` is the quota reservation. Instance
 * ids are global (`bc.evt.vps.instance.<instanceId>`); an id another tenant holds is refused.
 */
export const CreateInstance = z
  .object({
    tenantId: ResourceId,
    instanceId: ResourceId,
    poolId: ResourceId,
    flavorId: ResourceId,
    image: z.string().min(1).max(2_048),
    sshKeys: z.array(SshPublicKey).min(1).max(32),
    userData: z
      .string()
      .refine((text) => Buffer.byteLength(text, 'utf8') <= USER_DATA_MAX_BYTES, `must be at most ${USER_DATA_MAX_BYTES} bytes`)
      .optional(),
  })
  .strict();
export type CreateInstance = z.infer<typeof CreateInstance>;

/** One of a tenant's instances: what `releaseQuota`, `markQuotaUsed` and the desired-state verbs name. */
export const TenantInstance = z.object({ tenantId: ResourceId, instanceId: ResourceId }).strict();
export type TenantInstance = z.infer<typeof TenantInstance>;

/** Engine (reconciler): the instance is gone, or failed before anything was created; its reservation is given back. */
export const ReleaseQuota = TenantInstance;
/** Engine (reconciler): the instance ran at least once; its reservation now counts as used. */
export const MarkQuotaUsed = TenantInstance;

/** What a pool's machines come from: a cloud provider account, or bare-metal nodes at a site. */
export const PoolClass = z.enum(['provider', 'metal']);
export type PoolClass = z.infer<typeof PoolClass>;

/** Whether instances in the pool run the `bcd` agent. */
export const PoolAgent = z.enum(['none', 'bcd']);
export type PoolAgent = z.infer<typeof PoolAgent>;

/**
 * Metal-pool policy, stored for the metal lifecycle. Defaults: verified release required, no provisioning CIDRs,
 * `zero` wipes. `wipeMethod` is how releases and retirements of the pool's nodes erase their disks (`WipeMethod`).
 */
export const PoolPolicy = z
  .object({
    allowUnverifiedRelease: z.boolean().default(false),
    provisioningCidrs: z.array(Cidr).max(64).default([]),
    wipeMethod: WipeMethod.optional(),
  })
  .strict();
export type PoolPolicy = z.infer<typeof PoolPolicy>;

/** `vps.createPool`: a provider pool names its account, a metal pool its site. */
export const CreatePool = z
  .object({
    poolId: ResourceId,
    class: PoolClass,
    agent: PoolAgent,
    accountId: ResourceId.optional(),
    siteId: ResourceId.optional(),
    policy: PoolPolicy.optional(),
  })
  .strict()
  .superRefine((pool, ctx) => {
    if (pool.class === 'provider' && !pool.accountId) ctx.addIssue({ code: 'custom', path: ['accountId'], message: 'a provider pool needs accountId' });
    if (pool.class === 'metal' && !pool.siteId) ctx.addIssue({ code: 'custom', path: ['siteId'], message: 'a metal pool needs siteId' });
  });
export type CreatePool = z.infer<typeof CreatePool>;

/** `vps.offerPool` / `vps.withdrawPool`: whether a tenant may create instances in the pool (existing ones stay). */
export const PoolTenant = z.object({ poolId: ResourceId, tenantId: ResourceId }).strict();
export type PoolTenant = z.infer<typeof PoolTenant>;

/** `vps.createFlavor`: an instance size, what quota counts. */
export const CreateFlavor = z
  .object({
    flavorId: ResourceId,
    vcpus: z.number().int().positive().max(1_024),
    memoryMib: z.number().int().positive().max(16_777_216),
    diskGib: z.number().int().positive().max(1_048_576),
  })
  .strict();
export type CreateFlavor = z.infer<typeof CreateFlavor>;

/** `vps.mapFlavor`: the flavor is sold in the pool as the provider's `offerId`; mapping again replaces the offer. */
export const MapFlavor = z.object({ flavorId: ResourceId, poolId: ResourceId, offerId: z.string().min(1).max(200) }).strict();
export type MapFlavor = z.infer<typeof MapFlavor>;

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

/** What a tenant wants an instance to be; `running` from creation until someone says otherwise. */
export const DesiredInstanceState = z.enum(['running', 'stopped', 'deleted']);
export type DesiredInstanceState = z.infer<typeof DesiredInstanceState>;

/** What the reconciler last saw the instance be (the provider-neutral states of `schemas/vps/provider.ts`). */
export const ObservedInstanceState = z.enum(['provisioning', 'running', 'stopped', 'deleting', 'deleted', 'error']);
export type ObservedInstanceState = z.infer<typeof ObservedInstanceState>;

/** Engine (reconciler): what the instance looks like at the provider now. */
export const RecordInstanceObserved = z
  .object({
    instanceId: ResourceId,
    tenantId: ResourceId,
    observed: ObservedInstanceState,
    providerInstanceId: z.string().min(1).max(200).optional(),
    addresses: z.array(z.string().max(64)).max(32).optional(),
    message: z.string().max(2_000).optional(),
  })
  .strict();
export type RecordInstanceObserved = z.infer<typeof RecordInstanceObserved>;
