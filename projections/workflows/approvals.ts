import type { Database } from 'better-sqlite3';
import type { ApprovalView } from '../../schemas/metal/approvalViews.ts';

interface Row {
  workflow_id: string;
  node_id: string;
  operation: string;
  digest: string;
  items: string;
  threshold: number;
  approver_ids: string;
  granted_by: string;
  rejected_by: string | null;
  rejection_reason: string | null;
  requested_at: string;
  expires_at: string;
}

const toView = (r: Row, nowMs: number): ApprovalView => {
  const grantedBy = JSON.parse(r.granted_by) as string[];
  const state = r.rejected_by ? 'rejected' : new Set(grantedBy).size >= r.threshold ? 'approved' : Date.parse(r.expires_at) <= nowMs ? 'expired' : 'pending';
  return {
    workflowId: r.workflow_id,
    nodeId: r.node_id,
    operation: r.operation,
    digest: r.digest,
    items: JSON.parse(r.items) as ApprovalView['items'],
    threshold: r.threshold,
    approverIds: JSON.parse(r.approver_ids) as string[],
    grantedBy,
    state,
    rejectedBy: r.rejected_by,
    rejectionReason: r.rejection_reason,
    requestedAt: r.requested_at,
    expiresAt: r.expires_at,
  };
};

const select = `SELECT a.*, w.node_id, w.operation FROM approvals a JOIN workflows w ON w.workflow_id = a.workflow_id`;

/** Batches, newest first; `state` filters on the computed state (pending: what approvers have to look at). */
export function listApprovals(db: Database, filter: { state?: ApprovalView['state']; limit: number }, nowMs = Date.now()): ApprovalView[] {
  const rows = db.prepare(`${select} ORDER BY a.requested_at DESC, a.workflow_id LIMIT 5000`).all() as Row[];
  return rows
    .map((r) => toView(r, nowMs))
    .filter((v) => !filter.state || v.state === filter.state)
    .slice(0, filter.limit);
}

export function getApproval(db: Database, workflowId: string, nowMs = Date.now()): ApprovalView | undefined {
  const row = db.prepare(`${select} WHERE a.workflow_id = ?`).get(workflowId) as Row | undefined;
  return row && toView(row, nowMs);
}
