import type { Database } from 'better-sqlite3';
import { holdStatusAt, type HoldRecord, type HoldStatus } from '../../schemas/vps/holdState.ts';
import type { HoldView } from '../../schemas/vps/views.ts';

interface HoldRow {
  site_id: string;
  hold_id: string;
  tenant_id: string | null;
  pool_id: string | null;
  nodes: string;
  whole_nodes: number;
  selector: string;
  placed_at: string;
  expires_at: string;
  released_at: string | null;
}

function viewOf(row: HoldRow, nowMs: number): HoldView {
  const timing = { expiresAt: row.expires_at, releasedAt: row.released_at };
  return {
    holdId: row.hold_id,
    siteId: row.site_id,
    holder: row.tenant_id !== null ? { tenantId: row.tenant_id } : { poolId: row.pool_id! },
    status: holdStatusAt(timing, nowMs),
    nodes: JSON.parse(row.nodes) as HoldView['nodes'],
    wholeNodes: row.whole_nodes === 1,
    selector: JSON.parse(row.selector) as HoldView['selector'],
    placedAt: row.placed_at,
    ...timing,
  };
}

/** Holds, newest first, as they stand at `nowMs`; filtered by tenant (a tenant token: its own), site and status. */
export function listHolds(db: Database, filter: { tenantId: string | null; siteId: string | null; status: HoldStatus | null }, nowMs: number): HoldView[] {
  const rows = db
    .prepare(
      `SELECT * FROM vps_holds WHERE (@tenantId IS NULL OR tenant_id = @tenantId) AND (@siteId IS NULL OR site_id = @siteId)
       ORDER BY placed_at DESC, site_id, hold_id`,
    )
    .all({ tenantId: filter.tenantId, siteId: filter.siteId }) as HoldRow[];
  const views = rows.map((row) => viewOf(row, nowMs));
  return filter.status === null ? views : views.filter((v) => v.status === filter.status);
}

/** The hold with this id the caller may see (a tenant: only its own); undefined when there is none. */
export function holdById(db: Database, holdId: string, tenantId: string | null, nowMs: number): HoldView | undefined {
  const row = db
    .prepare('SELECT * FROM vps_holds WHERE hold_id = ? AND (? IS NULL OR tenant_id = ?) ORDER BY site_id LIMIT 1')
    .get(holdId, tenantId, tenantId) as HoldRow | undefined;
  return row ? viewOf(row, nowMs) : undefined;
}

/** The holds at a site still active at `nowMs`, as the hold book records them: what placement must respect. */
export function activeHoldsAt(db: Database, siteId: string | null, nowMs: number): HoldRecord[] {
  return listHolds(db, { tenantId: null, siteId, status: 'active' }, nowMs).map((v) => ({
    holdId: v.holdId,
    holder: v.holder,
    nodes: v.nodes.map(({ nodeId, resources }) => ({ nodeId, resources })),
    wholeNodes: v.wholeNodes,
    selector: v.selector,
    durationSeconds: Math.round((Date.parse(v.expiresAt) - Date.parse(v.placedAt)) / 1_000),
    placedAt: v.placedAt,
    expiresAt: v.expiresAt,
    releasedAt: v.releasedAt,
  }));
}
