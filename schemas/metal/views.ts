import { z } from 'zod';
import { nodeStates } from './nodeState.ts';

/** A node as the read model serves it. Credentials appear only as a secret reference. */
export const NodeView = z.object({
  nodeId: z.string(),
  siteId: z.string(),
  state: z.enum(nodeStates),
  maintenance: z.boolean(),
  maintenanceReason: z.string().nullable(),
  bmcAddress: z.string(),
  bmcCredentialsRef: z.string(),
  hardwareProfile: z.string(),
  macs: z.array(z.string()),
  enrolledAt: z.string(),
  updatedAt: z.string(),
  lastSeq: z.number().int(),
});
export type NodeView = z.infer<typeof NodeView>;
