import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Streams } from '../../schemas/subjects.ts';
import { agentDurableFor } from '../../services/trust/broker/permissions.ts';
import { openReadModel } from '../support/readModelDb.ts';

/**
 * Whether the installed host's `bcd node` is pulling its commands right now: its durable (made when it joined) has a
 * pull request waiting, which only a connected, consuming agent keeps open.
 */
export async function nodeAgentPulling(nc: NatsConnection, siteId: string, nodeId: string): Promise<boolean> {
  const durable = agentDurableFor({ role: 'node', agentId: `node-${nodeId}`, siteId, nodeId });
  const info = await (await jetstreamManager(nc)).consumers.info(Streams.agentCommands.name, durable).catch(() => undefined);
  return (info?.num_waiting ?? 0) > 0;
}

/** Every workflow's steps with their wall time, oldest first: where an emulated-site run spent its time. */
export function stepTimings(dataDir: string): string {
  using db = openReadModel(dataDir, 'workflows');
  const rows = db
    .prepare(
      `SELECT w.node_id AS nodeId, w.operation AS operation, s.step_index AS i, s.step_id AS stepId, s.attempts AS attempts,
              (julianday(s.ended_at) - julianday(s.started_at)) * 86400 AS seconds
         FROM workflows w JOIN workflow_steps s ON s.workflow_id = w.workflow_id
        ORDER BY w.started_at, s.step_index`,
    )
    .all() as { nodeId: string; operation: string; i: number; stepId: string; attempts: number; seconds: number | null }[];
  return rows.map((r) => `${r.nodeId} ${r.operation} #${r.i} ${r.stepId} x${r.attempts}: ${r.seconds === null ? '-' : r.seconds.toFixed(1)} s`).join('\n');
}
