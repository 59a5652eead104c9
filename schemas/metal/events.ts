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

export const metalEvents = [NodeEnrolled] as const;
export type MetalEvent = EventOf<(typeof metalEvents)[number]>;
