import { z } from 'zod';
import { ResourceId } from '../ids.ts';

/** An IPv4 CIDR such as `10.0.0.0/24`. */
export const Ipv4Cidr = z.string().regex(/^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}\/(3[0-2]|[12]?\d)$/, 'must be an IPv4 CIDR');

/** `site.create`: a place with BMCs and machines, served by one site agent. */
export const CreateSite = z
  .object({
    siteId: ResourceId,
    name: z.string().min(1).max(200),
    provisioningCidrs: z.array(Ipv4Cidr).max(64).default([]),
  })
  .strict();
export type CreateSite = z.infer<typeof CreateSite>;
