import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { Ipv4Cidr } from './commands.ts';

/**
 * v1 carried only the id and name; v2 added the provisioning CIDRs (a v1 site has none).
 */
export const SiteCreated = defineEvent('SiteCreated', z.object({ siteId: z.string(), name: z.string(), provisioningCidrs: z.array(Ipv4Cidr) }), {
  version: 2,
  upcasters: { 1: (data) => ({ provisioningCidrs: [], ...(data as object) }) },
});

export const siteEvents = [SiteCreated] as const;
export type SiteEvent = EventOf<(typeof siteEvents)[number]>;
