import { z } from 'zod';
import { nodeStates } from './nodeState.ts';

const Count = z.number().int().nonnegative();

/** Node counts of one site (or of the whole fleet): per state (every state, zero included) and the flags beside it. */
export const NodeCounts = z.object({
  total: Count,
  byState: z.record(z.enum(nodeStates), Count),
  /** Nodes in maintenance, whatever their state. */
  maintenance: Count,
  /** Operations requested but held back by the site's deploy or wipe cap. */
  waitingForCapacity: Count,
  /** Nodes in `failed` (the same as `byState.failed`, named for dashboards). */
  failed: Count,
});
export type NodeCounts = z.infer<typeof NodeCounts>;

/** `GET /v1/fleet/summary`: counts per site, sites ordered by id, and the fleet's totals. A tenant counts its own nodes. */
export const FleetSummary = z.object({
  sites: z.array(NodeCounts.extend({ siteId: z.string() })),
  fleet: NodeCounts,
  /** The `nodes` read model's checkpoint the counts were read at (pass it as `minSeq` to read no older). */
  seq: z.number().int().nonnegative(),
});
export type FleetSummary = z.infer<typeof FleetSummary>;
