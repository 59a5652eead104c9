import { z } from 'zod';

/** A site as the read model serves it. */
export const SiteView = z.object({
  siteId: z.string(),
  name: z.string(),
  provisioningCidrs: z.array(z.string()),
  createdAt: z.string(),
  nodeCount: z.number().int(),
});
export type SiteView = z.infer<typeof SiteView>;
