import type { Database } from 'better-sqlite3';

/** A node's owning tenant and the log position from which it has owned it; undefined for an unknown node. */
export function nodeOwnership(db: Database, nodeId: string): { tenantId: string | null; ownedSinceSeq: number | null } | undefined {
  const row = db.prepare('SELECT owner_tenant_id, owned_since_seq FROM nodes WHERE node_id = ?').get(nodeId) as
    { owner_tenant_id: string | null; owned_since_seq: number | null } | undefined;
  return row && { tenantId: row.owner_tenant_id, ownedSinceSeq: row.owned_since_seq };
}

/** Whether `workflowId` ran an operation for `tenantId` (it stays the tenant's after the node is released). */
export function isTenantWorkflow(db: Database, tenantId: string, workflowId: string): boolean {
  return db.prepare('SELECT 1 FROM workflow_tenants WHERE workflow_id = ? AND tenant_id = ?').get(workflowId, tenantId) !== undefined;
}

/** The site a node is enrolled at (its agents' subjects name it), or undefined when there is no such node. */
export function nodeSiteOf(db: Database, nodeId: string): string | undefined {
  return (db.prepare('SELECT site_id FROM nodes WHERE node_id = ?').get(nodeId) as { site_id: string } | undefined)?.site_id;
}
