import { z } from 'zod';
import { ResourceId } from '../ids.ts';

/**
 * What a tenant may take from the free pool, grouped so no node id of a node it does not own is shown: ready, nobody's,
 * out of maintenance and running the bcd ramdisk (the built-in deploy needs it), the nodes `metal.deploy` lets a tenant
 * claim.
 */
export const PoolOffer = z.object({
  siteId: z.string(),
  poolId: z.string().nullable(),
  hardwareProfile: z.string(),
  available: z.number().int().positive(),
});
export type PoolOffer = z.infer<typeof PoolOffer>;

/**
 * `POST /v1/pool/allocate`: take one free node of an offer and deploy it, as `metal.deploy` would with a node id. The
 * API picks the node (lowest id first, the next one when another caller took it first); the answer names it.
 */
export const AllocateNode = z
  .object({
    siteId: ResourceId,
    poolId: ResourceId.nullable().default(null),
    hardwareProfile: z.string().min(1).max(200),
    /** `metal.deploy`'s body without `nodeId` and `tenantId` (checked by the command itself, once the node is picked). */
    deploy: z
      .record(z.string(), z.unknown())
      .refine((d) => !Object.hasOwn(d, 'nodeId') && !Object.hasOwn(d, 'tenantId'), 'the API picks the node and the token names the tenant'),
  })
  .strict();
export type AllocateNode = z.infer<typeof AllocateNode>;
