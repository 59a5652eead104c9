import type { StoredEvent } from '../../../schemas/envelope.ts';
import type { HistoryInstant, NodeAtInstant, NodeHistory, NodeHistoryEntry } from '../../../schemas/metal/nodeHistory.ts';
import type { NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import type { AggregateDefinition } from '../../platform/commands/commandDefinition.ts';
import { nodeAggregate } from './node.ts';

/** One message of a node's subject: one command's events, at its stream sequence. */
export interface NodeBatch {
  readonly seq: number;
  readonly events: readonly StoredEvent[];
}

type ExistingNode = Extract<NodeAggregateState, { exists: true }>;

const atInstant = (node: ExistingNode): NodeAtInstant => ({
  nodeId: node.nodeId,
  siteId: node.siteId,
  state: node.state,
  maintenance: node.maintenance,
  maintenanceReason: node.maintenanceReason,
  maintenanceSource: node.maintenanceSource ?? null,
  tenantId: node.owner ?? null,
  hardwareProfile: node.hardwareProfile,
  macs: [...node.macs],
  operation: node.current?.operation ?? null,
  workflowId: node.current?.workflowId ?? null,
  failure: node.failed ? { operation: node.failed.operation, reason: node.failed.reason, failedStep: node.failed.failedStep } : null,
  inventory: node.inventory ?? null,
  addresses: [...(node.addresses ?? [])],
  poolId: node.poolId ?? null,
  agent: node.agent ?? 'bcd',
  operatorLabels: { ...(node.labels ?? {}) },
});

/**
 * The node aggregate's own fold, run as the aggregate repository runs it: the catalog upcasts and validates what the
 * log holds (any event type it knows), `evolve` takes it.
 */
const nodeFold: AggregateDefinition<NodeAggregateState> = nodeAggregate;

const batchTime = (batch: NodeBatch): string => batch.events[0]!.metadata.time;

/** Whether a batch happened at or before the instant asked for. */
const reached = (batch: NodeBatch, at: HistoryInstant | undefined): boolean =>
  at === undefined || ('seq' in at ? batch.seq <= at.seq : Date.parse(batchTime(batch)) <= Date.parse(at.time));

/**
 * Folds a node's batches (oldest first) with the node aggregate's own `evolve`, so the history says exactly what the
 * decider saw. `node` is the state after the last batch at or before `at`; the timeline lists the batches `visible`
 * allows (a tenant: from when it took the node on). Undefined when nothing visible happened by `at`.
 */
export function foldNodeHistory(
  nodeId: string,
  batches: readonly NodeBatch[],
  at: HistoryInstant | undefined,
  visible: (seq: number) => boolean = () => true,
): NodeHistory | undefined {
  let state = nodeFold.initialState;
  let snapshot: NodeHistory['node'] | undefined;
  let snapshotAt: NodeHistory['at'] | undefined;
  const timeline: NodeHistoryEntry[] = [];
  for (const batch of batches) {
    for (const event of batch.events) state = nodeFold.evolve(state, nodeFold.catalog.read(event));
    if (!state.exists || !visible(batch.seq)) continue;
    const now = atInstant(state);
    const time = batchTime(batch);
    timeline.push({
      seq: batch.seq,
      time,
      events: batch.events.map((e) => e.type),
      actor: batch.events[0]!.metadata.actor,
      state: now.state,
      maintenance: now.maintenance,
      operation: now.operation,
      workflowId: now.workflowId,
    });
    if (reached(batch, at)) {
      snapshot = now;
      snapshotAt = { seq: batch.seq, time };
    }
  }
  return snapshot && snapshotAt ? { nodeId, at: snapshotAt, node: snapshot, timeline } : undefined;
}
