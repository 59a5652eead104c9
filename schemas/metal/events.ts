import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';

export const NodeEnrolled = defineEvent(
  'NodeEnrolled',
  z.object({
    nodeId: z.string(),
    siteId: z.string(),
    bmc: z.object({ address: z.string(), credentialsRef: z.string() }),
    hardwareProfile: z.string(),
    macs: z.array(z.string()),
  }),
);

/** `source` tells a hand-set flag (stays until cleared) from one the platform set on BMC loss (clears on recovery). */
export const NodeMaintenanceSet = defineEvent(
  'NodeMaintenanceSet',
  z.object({ nodeId: z.string(), on: z.boolean(), reason: z.string().nullable(), source: z.enum(['operator', 'bmc']) }),
);

export const metalEvents = [NodeEnrolled, NodeMaintenanceSet] as const;
export type MetalEvent = EventOf<(typeof metalEvents)[number]>;
