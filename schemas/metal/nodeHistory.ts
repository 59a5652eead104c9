import { z } from 'zod';
import { nodeStates } from './nodeState.ts';
import { NodeView } from './views.ts';

/**
 * A node as its own events leave it at an instant of the log: the fields the node aggregate folds. Facts other
 * aggregates add to the read model (waiting for capacity, agent connections) are not part of a node's history.
 */
export const NodeAtInstant = NodeView.pick({
  nodeId: true,
  siteId: true,
  state: true,
  maintenance: true,
  maintenanceReason: true,
  maintenanceSource: true,
  tenantId: true,
  hardwareProfile: true,
  macs: true,
  operation: true,
  workflowId: true,
  failure: true,
  inventory: true,
  addresses: true,
  poolId: true,
  agent: true,
  operatorLabels: true,
});
export type NodeAtInstant = z.infer<typeof NodeAtInstant>;

/** One batch of the node's log (one command's events) and where it left the node. */
export const NodeHistoryEntry = z.object({
  seq: z.number().int().positive(),
  time: z.string(),
  events: z.array(z.string()),
  actor: z.string(),
  state: z.enum(nodeStates),
  maintenance: z.boolean(),
  operation: NodeView.shape.operation,
  workflowId: z.string().nullable(),
});
export type NodeHistoryEntry = z.infer<typeof NodeHistoryEntry>;

/**
 * `GET /v1/nodes/{id}/history?at=`: the node folded from its events up to `at` (a stream sequence or an ISO time;
 * absent: now), and the timeline of every batch (a tenant: the batches from when it took the node on).
 */
export const NodeHistory = z.object({
  nodeId: z.string(),
  /** The last batch folded into `node`. */
  at: z.object({ seq: z.number().int().positive(), time: z.string() }),
  node: NodeAtInstant,
  timeline: z.array(NodeHistoryEntry),
});
export type NodeHistory = z.infer<typeof NodeHistory>;

/** `at`: a stream sequence (digits) or an ISO 8601 time. */
export const HistoryInstant = z.union([
  z
    .string()
    .regex(/^\d+$/)
    .transform((s) => ({ seq: Number(s) })),
  z.iso.datetime({ offset: true }).transform((s) => ({ time: new Date(s).toISOString() })),
]);
export type HistoryInstant = z.output<typeof HistoryInstant>;
