import type { Database } from 'better-sqlite3';
import { cappedOperations, type CapacityCaps, type CapHold, type CappedSlot, type NodeOperation } from '../../schemas/metal/workflow.ts';

/** The operations that take a slot of each kind, as SQL list literals (fixed names, nothing from a request). */
const operationsOf = (slot: CappedSlot) =>
  Object.entries(cappedOperations)
    .filter(([, s]) => s === slot)
    .map(([operation]) => `'${operation}'`)
    .join(', ');

/** A node waiting for capacity, as much of it as the hold needs. */
export interface WaitingNode {
  readonly site_id: string;
  readonly owner_tenant_id: string | null;
  readonly current_operation: NodeOperation | null;
}

/**
 * Which cap holds a node waiting for capacity, from the read model as it stands: workflows in flight (started, not
 * ended) at its site and of its tenant, against the site caps and the tenant's caps (its own, `TenantCapsSet`, else
 * the default per tenant). The orchestrator decides from its own fold of the same events; this says why, for the API,
 * the CLI and the console. Counts are looked up once per site or tenant and slot kind per call of the reader.
 */
export function capHoldsOf(db: Database, caps: CapacityCaps): (node: WaitingNode) => CapHold | undefined {
  const counted = new Map<string, number>();
  const inFlight = (column: 'site_id' | 'owner_tenant_id', id: string, slot: CappedSlot): number => {
    const key = JSON.stringify([column, id, slot]);
    let n = counted.get(key);
    if (n === undefined) {
      const row = db
        .prepare(
          `SELECT COUNT(*) AS n FROM nodes WHERE ${column} = ? AND current_operation IN (${operationsOf(slot)})
           AND current_workflow_id IS NOT NULL AND waiting_reason IS NULL`,
        )
        .get(id) as { n: number };
      n = row.n;
      counted.set(key, n);
    }
    return n;
  };
  const tenantCap = (tenantId: string, slot: CappedSlot): number | undefined => {
    const own = db.prepare(`SELECT ${slot} AS cap FROM tenant_caps WHERE tenant_id = ?`).get(tenantId) as { cap: number | null } | undefined;
    return own?.cap ?? caps.tenant?.[slot];
  };
  return (node) => {
    const slot = node.current_operation ? cappedOperations[node.current_operation] : undefined;
    if (!slot) return undefined;
    const site = inFlight('site_id', node.site_id, slot);
    if (site >= caps[slot]) return { cap: 'site', siteId: node.site_id, slot, inFlight: site, limit: caps[slot] };
    if (node.owner_tenant_id === null) return undefined;
    const limit = tenantCap(node.owner_tenant_id, slot);
    if (limit === undefined) return undefined;
    const tenant = inFlight('owner_tenant_id', node.owner_tenant_id, slot);
    return tenant >= limit ? { cap: 'tenant', tenantId: node.owner_tenant_id, slot, inFlight: tenant, limit } : undefined;
  };
}
