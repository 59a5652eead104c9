import type { Database } from 'better-sqlite3';
import type { FleetSummary, NodeCounts } from '../../schemas/metal/fleetViews.ts';
import { nodeStates, type NodeState } from '../../schemas/metal/nodeState.ts';
import { WaitingReason } from '../../schemas/metal/workflow.ts';
import { readCheckpoint } from '../runtime/readModelDatabase.ts';

interface CountRow {
  site_id: string;
  state: NodeState;
  nodes: number;
  maintenance: number;
  waiting: number;
}

const emptyCounts = (): NodeCounts => ({
  total: 0,
  byState: Object.fromEntries(nodeStates.map((s) => [s, 0])) as NodeCounts['byState'],
  maintenance: 0,
  waitingForCapacity: 0,
  failed: 0,
});

const add = (counts: NodeCounts, row: CountRow): void => {
  counts.total += row.nodes;
  counts.byState[row.state] += row.nodes;
  counts.maintenance += row.maintenance;
  counts.waitingForCapacity += row.waiting;
  if (row.state === 'failed') counts.failed += row.nodes;
};

/** Node counts per site and for the fleet, in one grouped scan; `tenantId` counts only that tenant's nodes. */
export function fleetSummary(db: Database, filter: { tenantId: string | null }): FleetSummary {
  // Read before the counts: the counts are at least this recent, so `minSeq=seq` never waits on a model behind them.
  const seq = readCheckpoint(db).seq;
  const rows = db
    .prepare(
      `SELECT site_id, state, COUNT(*) AS nodes, SUM(maintenance) AS maintenance, SUM(waiting_reason IS @waiting) AS waiting
       FROM nodes WHERE (@tenantId IS NULL OR owner_tenant_id = @tenantId)
       GROUP BY site_id, state ORDER BY site_id`,
    )
    .all({ tenantId: filter.tenantId, waiting: WaitingReason.capacity }) as CountRow[];
  const sites = new Map<string, NodeCounts>();
  const fleet = emptyCounts();
  for (const row of rows) {
    if (!sites.has(row.site_id)) sites.set(row.site_id, emptyCounts());
    add(sites.get(row.site_id)!, row);
    add(fleet, row);
  }
  return { sites: [...sites].map(([siteId, counts]) => ({ siteId, ...counts })), fleet, seq };
}
