import { isIP } from 'node:net';
import { z } from 'zod';
import { WipeMethod } from '../agent/diskWipe.ts';
import { BcxPluginId } from '../bcx/bcxProtocol.ts';
import { ResourceId } from '../ids.ts';

/** An IPv4 or IPv6 CIDR such as `10.0.0.0/24` or `2001:db8::/64`. */
export const Cidr = z.string().refine((value) => {
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || !address || !prefix || !/^\d{1,3}$/.test(prefix)) return false;
  const family = isIP(address);
  return family !== 0 && Number(prefix) <= (family === 4 ? 32 : 128);
}, 'must be a CIDR (address/prefix)');

/** What a pool's machines come from: a cloud provider account, or bare-metal nodes at a site. */
export const PoolClass = z.enum(['provider', 'metal']);
export type PoolClass = z.infer<typeof PoolClass>;

/** Whether instances in the pool run the `bcd` agent. */
export const PoolAgent = z.enum(['none', 'bcd']);
export type PoolAgent = z.infer<typeof PoolAgent>;

/**
 * Metal-pool policy, stored for the metal lifecycle. Defaults: verified release required, no provisioning CIDRs,
 * `zero` wipes. `wipeMethod` is how releases and retirements of the pool's nodes erase their disks (`WipeMethod`).
 * `hardwareProfile` selects the hardware profile (and so the drivers) of the pool's nodes: an enrolment into the pool
 * naming none takes it, one naming another is refused (`HARDWARE_PROFILE_MISMATCH`).
 */
export const PoolPolicy = z
  .object({
    allowUnverifiedRelease: z.boolean().default(false),
    provisioningCidrs: z.array(Cidr).max(64).default([]),
    wipeMethod: WipeMethod.optional(),
    hardwareProfile: ResourceId.optional(),
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
    /** A metal pool's bcx runtime: its instances are placed on nodes carrying `bc.dev/driver.<runtime>` and run there. */
    runtime: BcxPluginId.optional(),
  })
  .strict()
  .superRefine((pool, ctx) => {
    if (pool.runtime !== undefined && pool.class !== 'metal') ctx.addIssue({ code: 'custom', path: ['runtime'], message: 'only a metal pool has a runtime' });
    if (pool.runtime !== undefined && pool.agent === 'none')
      ctx.addIssue({ code: 'custom', path: ['runtime'], message: 'an agentless pool runs no runtime: its nodes run no bcd node' });
    if (pool.class === 'provider' && !pool.accountId) ctx.addIssue({ code: 'custom', path: ['accountId'], message: 'a provider pool needs accountId' });
    if (pool.class === 'metal' && !pool.siteId) ctx.addIssue({ code: 'custom', path: ['siteId'], message: 'a metal pool needs siteId' });
  });
export type CreatePool = z.infer<typeof CreatePool>;

/** `vps.offerPool` / `vps.withdrawPool`: whether a tenant may create instances in the pool (existing ones stay). */
export const PoolTenant = z.object({ poolId: ResourceId, tenantId: ResourceId }).strict();
export type PoolTenant = z.infer<typeof PoolTenant>;
