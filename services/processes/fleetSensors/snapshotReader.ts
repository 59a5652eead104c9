import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Database } from 'better-sqlite3';
import { BmcObservation, type FleetSnapshot, type SnapshotInstance, type SnapshotNode, type SnapshotStep } from '../../../schemas/autonomy/snapshot.ts';
import { Streams, Subjects } from '../../../schemas/subjects.ts';
import { listNodes } from '../../../projections/nodes/queries.ts';
import { longLivedAgentKeys } from '../../../projections/agents/queries.ts';
import { listTemplates, pinnedPlans, publishedManifests, templateAssignments } from '../../../projections/modules/queries.ts';
import type { ReadModelReader } from '../../../projections/runtime/readModelReader.ts';
import { withinReplayDeadline } from '../../platform/nats/replayDeadline.ts';
import type { AgentPresenceView } from '../../agents/agentPresence.ts';
import { templateClosuresOf } from './templateClosures.ts';

/** The read models a snapshot is built from (absent ones contribute nothing). */
export interface SnapshotSources {
  nodes?: ReadModelReader;
  workflows?: ReadModelReader;
  vps?: ReadModelReader;
  agents?: ReadModelReader;
  /** Each host's pinned module plan (`host_assignments`) and the published versions' digests. */
  modules?: ReadModelReader;
}

function nodesOf(db: Database, controlPlane: ReadonlySet<string>): SnapshotNode[] {
  const out: SnapshotNode[] = [];
  let cursor: string | undefined;
  do {
    const page = listNodes(db, { limit: 1_000, ...(cursor ? { cursor } : {}) });
    for (const n of page.items) {
      out.push({
        nodeId: n.nodeId,
        siteId: n.siteId,
        state: n.state,
        maintenance: n.maintenance,
        maintenanceSource: n.maintenanceSource,
        failure: n.failure ? { operation: n.failure.operation, reason: n.failure.reason, failedStep: n.failure.failedStep } : null,
        waitingReason: n.waitingReason,
        updatedAt: n.updatedAt,
        agent: n.agent,
        controlPlane: controlPlane.has(n.nodeId),
      });
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

function runningStepsOf(db: Database, stepTimeoutMs: number): SnapshotStep[] {
  const rows = db
    .prepare(
      `SELECT s.workflow_id, w.node_id, w.site_id, s.step_id, s.started_at, s.timeout_ms FROM workflow_steps s JOIN workflows w USING (workflow_id)
       WHERE s.state = 'running' AND s.started_at IS NOT NULL`,
    )
    .all() as { workflow_id: string; node_id: string; site_id: string; step_id: string; started_at: string; timeout_ms: number | null }[];
  return rows.map((r) => ({
    workflowId: r.workflow_id,
    nodeId: r.node_id,
    siteId: r.site_id,
    stepId: r.step_id,
    startedAt: r.started_at,
    // The step's own timeout, frozen at start; rows projected before the read model kept it fall back to the setting.
    timeoutMs: r.timeout_ms ?? stepTimeoutMs,
  }));
}

function instancesOf(db: Database): SnapshotInstance[] {
  const rows = db.prepare(`SELECT instance_id, tenant_id, desired, observed, message, placement FROM vps_instances`).all() as {
    instance_id: string;
    tenant_id: string;
    desired: string;
    observed: string | null;
    message: string | null;
    placement: string | null;
  }[];
  return rows.map((r) => {
    const placement = r.placement === null ? null : (JSON.parse(r.placement) as { siteId: string; nodeId: string });
    const placedOn = placement && { siteId: placement.siteId, nodeId: placement.nodeId };
    return { instanceId: r.instance_id, tenantId: r.tenant_id, desired: r.desired, observed: r.observed, message: r.message, placement: placedOn };
  });
}

/** The latest BMC observation of every node: one ordered consumer delivering the last message per subject. */
export async function readBmcObservations(nc: NatsConnection): Promise<BmcObservation[]> {
  const js = jetstream(nc);
  const jsm = await js.jetstreamManager();
  const info = await jsm.streams.info(Streams.signals.name, { subjects_filter: Subjects.allBmcObservations });
  const expected = Object.keys(info.state.subjects ?? {}).length;
  if (expected === 0) return [];
  const consumer = await js.consumers.get(Streams.signals.name, { filter_subjects: Subjects.allBmcObservations, deliver_policy: DeliverPolicy.LastPerSubject });
  const out: BmcObservation[] = [];
  const messages = await consumer.consume({ max_messages: 1_000 });
  try {
    for await (const m of withinReplayDeadline(messages, 'BMC observations')) {
      const parsed = BmcObservation.safeParse(m.json());
      if (parsed.success) out.push(parsed.data);
      if (m.info.pending === 0) break;
    }
  } finally {
    await messages.close();
  }
  return out;
}

/** Builds the snapshot one pass runs over. */
export async function readSnapshot(
  nc: NatsConnection,
  sources: SnapshotSources,
  options: { now: Date; stepTimeoutMs: number; controlPlaneNodes: readonly string[]; presence?: AgentPresenceView },
): Promise<FleetSnapshot> {
  const { presence } = options;
  // A read model that cannot be read fails the whole pass (no marker): an empty snapshot would make every signal look
  // absent and every sensor ok, and outcome validation would then call remediations effective. Fail closed.
  const read = <T>(reader: ReadModelReader | undefined, f: (db: Database) => T[]): T[] => (reader ? reader.query(f) : []);
  // One read of the templates and the catalogue for the whole pass (one query: the same read model moment for all).
  const [closureInputs] = read(sources.modules, (db) => [
    { assigned: templateAssignments(db), templates: listTemplates(db), manifests: publishedManifests(db) },
  ]);
  return {
    at: options.now.toISOString(),
    nodes: read(sources.nodes, (db) => nodesOf(db, new Set(options.controlPlaneNodes))),
    bmc: await readBmcObservations(nc),
    runningSteps: read(sources.workflows, (db) => runningStepsOf(db, options.stepTimeoutMs)),
    instances: read(sources.vps, instancesOf),
    agents: read(sources.agents, (db) =>
      longLivedAgentKeys(db).map((a) => ({
        agentId: a.agentId,
        role: a.role,
        siteId: a.siteId,
        nodeId: a.nodeId,
        keySince: a.keySince,
        rotationRequestedAt: a.rotationRequestedAt,
      })),
    ),
    heartbeats: (presence?.all() ?? []).map(({ nodeId, presence: p }) => ({
      nodeId,
      agentId: p.agentId,
      role: p.role,
      heardAt: p.heardAt,
      modules: p.modules,
    })),
    heartbeatsSince: presence ? new Date(presence.listeningSinceMs()).toISOString() : null,
    assignments: read(sources.modules, pinnedPlans),
    templateClosures: closureInputs ? await templateClosuresOf(closureInputs.assigned, closureInputs.templates, closureInputs.manifests) : [],
  };
}
