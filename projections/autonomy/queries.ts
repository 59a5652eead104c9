import type { Database } from 'better-sqlite3';
import type { BudgetView, ControlsView, DecisionHistoryEntry, DecisionView } from '../../schemas/autonomy/views.ts';

interface DecisionRow {
  decision_id: string;
  category: string;
  key: string;
  owner: string;
  episode: number;
  status: DecisionView['status'];
  disposition: DecisionView['disposition'];
  disposition_reason: string | null;
  approved_by: string | null;
  signal: string;
  plan: string;
  plan_digest: string;
  expires_at: string | null;
  approvals: string;
  cooldown_until: string | null;
  settle_until: string | null;
  remediation: string | null;
  last_outcome: string | null;
  ineffective_streak: number;
  escalated: number;
  closed_reason: string | null;
  opened_at: string;
  updated_at: string;
}

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

const toView = (r: DecisionRow): DecisionView => ({
  decisionId: r.decision_id,
  category: r.category,
  key: r.key,
  owner: r.owner,
  episode: r.episode,
  status: r.status,
  disposition: r.disposition,
  dispositionReason: r.disposition_reason,
  approvedBy: r.approved_by,
  signal: JSON.parse(r.signal) as DecisionView['signal'],
  plan: JSON.parse(r.plan) as DecisionView['plan'],
  planDigest: r.plan_digest,
  expiresAt: r.expires_at,
  approvals: JSON.parse(r.approvals) as string[],
  cooldownUntil: r.cooldown_until,
  settleUntil: r.settle_until,
  remediation: json(r.remediation),
  lastOutcome: json(r.last_outcome),
  ineffectiveStreak: r.ineffective_streak,
  escalated: r.escalated === 1,
  closedReason: r.closed_reason,
  openedAt: r.opened_at,
  updatedAt: r.updated_at,
});

/** Decisions, most recently changed first; `status=pending` lists what approvers have to answer, soonest expiry first. */
export function listDecisions(db: Database, filter: { status?: string; category?: string; owner?: string; limit: number }): DecisionView[] {
  const order = filter.status === 'pending' ? 'expires_at ASC, decision_id' : 'updated_at DESC, decision_id';
  const rows = db
    .prepare(
      `SELECT * FROM autonomy_decisions WHERE (@status IS NULL OR status = @status) AND (@category IS NULL OR category = @category) AND (@owner IS NULL OR owner = @owner)
       ORDER BY ${order} LIMIT @limit`,
    )
    .all({ status: filter.status ?? null, category: filter.category ?? null, owner: filter.owner ?? null, limit: filter.limit }) as DecisionRow[];
  return rows.map(toView);
}

export function getDecision(db: Database, decisionId: string): DecisionView | undefined {
  const row = db.prepare('SELECT * FROM autonomy_decisions WHERE decision_id = ?').get(decisionId) as DecisionRow | undefined;
  return row && toView(row);
}

export function decisionHistory(db: Database, decisionId: string): DecisionHistoryEntry[] {
  const rows = db.prepare('SELECT seq, episode, type, actor, time, data FROM autonomy_history WHERE decision_id = ? ORDER BY seq, idx').all(decisionId) as {
    seq: number;
    episode: number;
    type: string;
    actor: string;
    time: string;
    data: string;
  }[];
  return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as unknown }));
}

/** Every scope's budget as of `nowMs`: the uses of its sliding window ending then. */
export function listBudgets(db: Database, nowMs = Date.now()): BudgetView[] {
  const budgets = db.prepare('SELECT * FROM autonomy_budgets ORDER BY scope').all() as {
    scope: string;
    budget_id: string;
    limit_count: number;
    window_ms: number;
  }[];
  const uses = db.prepare('SELECT at FROM autonomy_budget_uses WHERE scope = ? AND at > ? ORDER BY at');
  return budgets.map((b) => {
    const inWindow = (uses.all(b.scope, new Date(nowMs - b.window_ms).toISOString()) as { at: string }[]).map((u) => Date.parse(u.at));
    const full = b.limit_count > 0 && inWindow.length >= b.limit_count;
    return {
      budgetId: b.budget_id,
      scope: b.scope,
      windowMs: b.window_ms,
      limit: b.limit_count,
      consumed: inWindow.length,
      nextFreeAt: full ? new Date(inWindow[inWindow.length - b.limit_count]! + b.window_ms).toISOString() : null,
    };
  });
}

export function controlsOf(db: Database): ControlsView {
  const halt = db.prepare('SELECT halted, reason FROM autonomy_halt WHERE id = 1').get() as { halted: number; reason: string | null } | undefined;
  const paused = (db.prepare('SELECT owner FROM autonomy_paused ORDER BY owner').all() as { owner: string }[]).map((r) => r.owner);
  const overrides = Object.fromEntries(
    (db.prepare('SELECT category, disposition FROM autonomy_overrides').all() as { category: string; disposition: string }[]).map((r) => [
      r.category,
      r.disposition,
    ]),
  );
  return {
    halted: halt?.halted === 1,
    haltReason: halt?.halted === 1 ? halt.reason : null,
    pausedOwners: paused,
    overrides: overrides as ControlsView['overrides'],
  };
}
