import type { Database } from 'better-sqlite3';
import { BUDGET_REMEMBERED_MS } from '../../schemas/autonomy/budgetCommands.ts';
import type { DecisionEvent } from '../../schemas/autonomy/decisionEvents.ts';
import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { autonomyMigrations } from './schema.ts';

const decisionTypes = new Set([
  'DecisionOpened',
  'DecisionUpdated',
  'DecisionApprovalRecorded',
  'DecisionApproved',
  'DecisionApprovalRequired',
  'DecisionRejected',
  'DecisionRemediationStarted',
  'DecisionOutcomeRecorded',
  'DecisionResolved',
]);

const set = (db: Database, decisionId: string, time: string, fields: Record<string, unknown>) => {
  const names = Object.keys(fields);
  statement(db, `UPDATE autonomy_decisions SET ${names.map((n) => `${n} = @${n}`).join(', ')}, updated_at = @updated_at WHERE decision_id = @decision_id`).run({
    ...fields,
    updated_at: time,
    decision_id: decisionId,
  });
};

function applyDecision(db: Database, event: DecisionEvent, time: string): void {
  const { decisionId } = event.data;
  switch (event.type) {
    case 'DecisionOpened': {
      const d = event.data;
      const status = d.disposition === 'auto' ? 'approved' : d.disposition === 'require' ? 'pending' : d.disposition === 'notify' ? 'notified' : 'blocked';
      statement(
        db,
        `INSERT INTO autonomy_decisions (decision_id, category, key, owner, episode, status, disposition, disposition_reason, approved_by, signal, plan, plan_digest,
           expires_at, approvals, cooldown_until, settle_until, remediation, closed_reason, opened_at, updated_at)
         VALUES (@id, @category, @key, @owner, @episode, @status, @disposition, @reason, @approvedBy, @signal, @plan, @digest, @expiresAt, '[]', NULL, NULL, NULL, NULL, @time, @time)
         ON CONFLICT (decision_id) DO UPDATE SET episode = excluded.episode, status = excluded.status, owner = excluded.owner, disposition = excluded.disposition,
           disposition_reason = excluded.disposition_reason, approved_by = excluded.approved_by, signal = excluded.signal, plan = excluded.plan,
           plan_digest = excluded.plan_digest, expires_at = excluded.expires_at, approvals = '[]', cooldown_until = NULL, settle_until = NULL,
           remediation = NULL, closed_reason = NULL, escalated = 0, opened_at = excluded.opened_at, updated_at = excluded.updated_at`,
      ).run({
        id: decisionId,
        category: d.category,
        key: d.key,
        owner: d.policy.owner,
        episode: d.episode,
        status,
        disposition: d.disposition,
        reason: d.dispositionReason,
        approvedBy: status === 'approved' ? 'policy' : null,
        signal: JSON.stringify(d.signal),
        plan: JSON.stringify(d.plan),
        digest: d.planDigest,
        expiresAt: d.expiresAt,
        time,
      });
      return;
    }
    case 'DecisionUpdated':
      return set(db, decisionId, time, {
        signal: JSON.stringify(event.data.signal),
        plan: JSON.stringify(event.data.plan),
        plan_digest: event.data.planDigest,
        approvals: '[]',
      });
    case 'DecisionApprovalRecorded': {
      const row = statement(db, 'SELECT approvals FROM autonomy_decisions WHERE decision_id = ?').get(decisionId) as { approvals: string } | undefined;
      return set(db, decisionId, time, { approvals: JSON.stringify([...(JSON.parse(row?.approvals ?? '[]') as string[]), event.data.approverId]) });
    }
    case 'DecisionApproved':
      return set(db, decisionId, time, { status: 'approved', approved_by: event.data.by });
    case 'DecisionApprovalRequired':
      return set(db, decisionId, time, {
        status: 'pending',
        approved_by: null,
        disposition: 'require',
        disposition_reason: event.data.reason,
        expires_at: event.data.expiresAt,
      });
    case 'DecisionRejected':
      return set(db, decisionId, time, { status: 'closed', cooldown_until: event.data.cooldownUntil, closed_reason: event.data.reason });
    case 'DecisionRemediationStarted':
      return set(db, decisionId, time, {
        status: 'running',
        settle_until: event.data.settleUntil,
        remediation: JSON.stringify({ commandName: event.data.commandName, commandId: event.data.commandId }),
      });
    case 'DecisionOutcomeRecorded': {
      const { effective, signalPresent, sensorOk } = event.data;
      return set(db, decisionId, time, {
        status: 'closed',
        closed_reason: 'outcome',
        last_outcome: JSON.stringify({ effective, signalPresent, sensorOk }),
        ineffective_streak: event.data.ineffectiveStreak,
        escalated: event.data.escalated ? 1 : 0,
      });
    }
    case 'DecisionResolved':
      return set(db, decisionId, time, { status: 'closed', closed_reason: 'resolved' });
  }
}

/** The `autonomy` read model: decisions with their history, budgets, and the operators' controls. */
export const autonomyProjection = defineProjection({
  name: 'autonomy',
  migrations: autonomyMigrations,
  apply(db, event, metadata, position) {
    if (decisionTypes.has(event.type)) {
      const e = event as DecisionEvent;
      applyDecision(db, e, metadata.time);
      const idx = (statement(db, 'SELECT COUNT(*) AS n FROM autonomy_history WHERE seq = ?').get(position.seq) as { n: number }).n;
      statement(db, 'INSERT INTO autonomy_history (seq, idx, decision_id, episode, type, actor, time, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
        position.seq,
        idx,
        e.data.decisionId,
        e.data.episode,
        e.type,
        metadata.actor,
        metadata.time,
        JSON.stringify(e.data),
      );
      return;
    }
    switch (event.type) {
      case 'BudgetTaken': {
        const { scope, budgetId, limit, windowMs, decisionId, episode, at } = event.data;
        statement(
          db,
          `INSERT INTO autonomy_budgets (scope, budget_id, limit_count, window_ms) VALUES (?, ?, ?, ?)
           ON CONFLICT (scope) DO UPDATE SET limit_count = excluded.limit_count, window_ms = excluded.window_ms`,
        ).run(scope, budgetId, limit, windowMs);
        statement(db, 'INSERT OR IGNORE INTO autonomy_budget_uses (scope, decision_id, episode, at) VALUES (?, ?, ?, ?)').run(scope, decisionId, episode, at);
        // What the aggregate forgets, the read model forgets too: no window can hold it.
        const horizon = new Date(Date.parse(at) - BUDGET_REMEMBERED_MS).toISOString();
        statement(db, 'DELETE FROM autonomy_budget_uses WHERE scope = ? AND at <= ?').run(scope, horizon);
        return;
      }
      case 'PolicyDispositionSet':
        if (event.data.disposition === null) statement(db, 'DELETE FROM autonomy_overrides WHERE category = ?').run(event.data.category);
        else
          statement(
            db,
            'INSERT INTO autonomy_overrides (category, disposition) VALUES (?, ?) ON CONFLICT (category) DO UPDATE SET disposition = excluded.disposition',
          ).run(event.data.category, event.data.disposition);
        return;
      case 'OwnerPauseSet':
        if (event.data.paused)
          statement(db, 'INSERT OR REPLACE INTO autonomy_paused (owner, reason, since) VALUES (?, ?, ?)').run(
            event.data.owner,
            event.data.reason,
            metadata.time,
          );
        else statement(db, 'DELETE FROM autonomy_paused WHERE owner = ?').run(event.data.owner);
        return;
      case 'AutonomyHaltSet':
        statement(db, 'INSERT OR REPLACE INTO autonomy_halt (id, halted, reason, since) VALUES (1, ?, ?, ?)').run(
          event.data.halted ? 1 : 0,
          event.data.reason,
          metadata.time,
        );
        return;
    }
  },
});
