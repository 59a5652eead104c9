import type { Database } from 'better-sqlite3';
import { defineProjection, type LogPosition } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { workflowsMigrations } from './schema.ts';

/**
 * The statement that sets `set` on a step, built once per fragment, as the nodes projection's (issue 34): built per
 * event, each event made a new string and hashed it again to find its prepared statement.
 */
const stepStatements = new Map<string, string>();
function stepSql(set: string): string {
  let sql = stepStatements.get(set);
  if (sql === undefined) stepStatements.set(set, (sql = `UPDATE workflow_steps SET ${set} WHERE workflow_id = ? AND step_index = ?`));
  return sql;
}

/** Sets `set` on a step; `args` fill the `?` of `set`, then the workflow id and step index. Not a closure made per event. */
function step(db: Database, set: string, ...args: unknown[]): void {
  statement(db, stepSql(set)).run(...args);
}

/** Moves a workflow's `last_seq` to the event's position. */
function touch(db: Database, position: LogPosition, workflowId: string): void {
  statement(db, 'UPDATE workflows SET last_seq = ? WHERE workflow_id = ?').run(position.seq, workflowId);
}

/**
 * The `workflows` read model: one row per workflow and one per step, so the history of a node is plain SQL
 * (e.g. attested wipes: `json_extract(output, '$.attested') = 1`, a field only steps that attest a wipe have).
 */
export const workflowsProjection = defineProjection({
  name: 'workflows',
  migrations: workflowsMigrations,
  apply(db, event, metadata, position) {
    switch (event.type) {
      case 'WorkflowStarted': {
        const d = event.data;
        statement(
          db,
          `INSERT INTO workflows (workflow_id, node_id, site_id, operation, profile_id, profile_version, state, started_at, last_seq)
           VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)`,
        ).run(d.workflowId, d.nodeId, d.siteId, d.operation, d.profile.id, d.profile.version, d.startedAt, position.seq);
        const insert = statement(
          db,
          `INSERT INTO workflow_steps (workflow_id, step_index, step_id, runs_on, destructive, params, state, timeout_ms) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)`,
        );
        d.steps.forEach((s, i) => insert.run(d.workflowId, i, s.id, s.runsOn, s.destructive ? 1 : 0, JSON.stringify(s.params), s.timeoutMs));
        return;
      }
      case 'StepScheduled':
        step(db, `state = 'scheduled'`, event.data.workflowId, event.data.stepIndex);
        return touch(db, position, event.data.workflowId);
      case 'StepStarted':
        step(
          db,
          `state = 'running', attempts = ?, started_at = COALESCE(started_at, ?)`,
          event.data.attempt,
          metadata.time,
          event.data.workflowId,
          event.data.stepIndex,
        );
        return touch(db, position, event.data.workflowId);
      case 'StepSucceeded':
        step(
          db,
          `state = 'succeeded', attempts = ?, output = ?, error_code = NULL, error = NULL, ended_at = ?`,
          event.data.attempt,
          JSON.stringify(event.data.output ?? null),
          metadata.time,
          event.data.workflowId,
          event.data.stepIndex,
        );
        return touch(db, position, event.data.workflowId);
      case 'StepFailed':
        step(
          db,
          `state = ?, attempts = ?, error_code = ?, error = ?, ended_at = ?`,
          event.data.retryable ? 'retrying' : 'failed',
          event.data.attempt,
          event.data.code,
          event.data.message,
          metadata.time,
          event.data.workflowId,
          event.data.stepIndex,
        );
        return touch(db, position, event.data.workflowId);
      case 'ApprovalRequested': {
        const d = event.data;
        statement(
          db,
          `INSERT INTO approvals (workflow_id, digest, items, threshold, approver_ids, requested_at, expires_at, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(d.workflowId, d.digest, JSON.stringify(d.items), d.threshold, JSON.stringify(d.approverIds), metadata.time, d.expiresAt, position.seq);
        return touch(db, position, d.workflowId);
      }
      case 'ApprovalGranted':
        statement(db, `UPDATE approvals SET granted_by = json_insert(granted_by, '$[#]', ?), last_seq = ? WHERE workflow_id = ?`).run(
          event.data.approverId,
          position.seq,
          event.data.workflowId,
        );
        return touch(db, position, event.data.workflowId);
      case 'ApprovalRejected':
        statement(db, `UPDATE approvals SET rejected_by = ?, rejection_reason = ?, last_seq = ? WHERE workflow_id = ?`).run(
          event.data.approverId,
          event.data.reason,
          position.seq,
          event.data.workflowId,
        );
        return touch(db, position, event.data.workflowId);
      case 'AgentResultRejected':
        step(db, 'rejected_results = rejected_results + 1', event.data.workflowId, event.data.stepIndex);
        return touch(db, position, event.data.workflowId);
      case 'AgentResultsRejectedCounted':
        step(db, 'rejected_results = rejected_results + ?', event.data.refused, event.data.workflowId, event.data.stepIndex);
        return touch(db, position, event.data.workflowId);
      case 'WorkflowRewound':
        // The boot and the steps after it run again; their rows show the attempts so far until they do.
        statement(db, `UPDATE workflow_steps SET state = 'pending', output = NULL WHERE workflow_id = ? AND step_index BETWEEN ? AND ?`).run(
          event.data.workflowId,
          event.data.toStepIndex,
          event.data.fromStepIndex,
        );
        return touch(db, position, event.data.workflowId);
      case 'WorkflowCancelRequested':
        statement(db, `UPDATE workflows SET state = 'cancelling', error = ?, last_seq = ? WHERE workflow_id = ?`).run(
          event.data.reason,
          position.seq,
          event.data.workflowId,
        );
        return;
      case 'WorkflowCancelled':
        statement(db, `UPDATE workflows SET state = 'cancelled', error = ?, ended_at = ?, last_seq = ? WHERE workflow_id = ?`).run(
          event.data.reason,
          metadata.time,
          position.seq,
          event.data.workflowId,
        );
        return;
      case 'WorkflowCompleted':
        statement(db, `UPDATE workflows SET state = 'completed', ended_at = ?, last_seq = ? WHERE workflow_id = ?`).run(
          metadata.time,
          position.seq,
          event.data.workflowId,
        );
        return;
      case 'WorkflowFailed':
        statement(db, `UPDATE workflows SET state = 'failed', failed_step = ?, error = ?, ended_at = ?, last_seq = ? WHERE workflow_id = ?`).run(
          event.data.failedStep,
          event.data.reason,
          metadata.time,
          position.seq,
          event.data.workflowId,
        );
        return;
      default:
        return;
    }
  },
});
