import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { SshPublicKey } from '../sshPublicKey.ts';

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

/** `vps.createTenant`: someone who may own VPS instances; its quota starts at zero. */
export const CreateTenant = z.object({ tenantId: ResourceId, name: z.string().min(1).max(200) }).strict();
export type CreateTenant = z.infer<typeof CreateTenant>;

/** `vps.setQuota`: the tenant's limits. Lowering them below current usage refuses only new instances. */
export const SetQuota = Resources.extend({ tenantId: ResourceId }).strict();
export type SetQuota = z.infer<typeof SetQuota>;

/**
 * `vps.setTenantCaps`: how many of the tenant's nodes may deploy, and wipe (release or retire), at once across all
 * sites, beside each site's caps; `null` (or left out): the orchestrator's default per tenant. Takes effect at the
 * orchestrator's next admission, with no restart; workflows already running are never stopped by a lower cap.
 */
export const SetTenantCaps = z
  .object({
    tenantId: ResourceId,
    deploys: z.number().int().min(1).max(100_000).nullable().default(null),
    wipes: z.number().int().min(1).max(100_000).nullable().default(null),
  })
  .strict();
export type SetTenantCaps = z.infer<typeof SetTenantCaps>;

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

/** One of a tenant's instances: what `releaseQuota` and the desired-state verbs name. */
export const TenantInstance = z.object({ tenantId: ResourceId, instanceId: ResourceId }).strict();
export type TenantInstance = z.infer<typeof TenantInstance>;

/** Engine (reconciler): the instance is gone, or failed before anything was created; its reservation is given back. */
export const ReleaseQuota = TenantInstance;
