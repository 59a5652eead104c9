import type { Database } from 'better-sqlite3';
import { cappedOperations } from '../../schemas/metal/workflow.ts';
import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { binOf } from './durationHistogram.ts';
import { epochMsOf, hourOf } from './hours.ts';
import { trendsMigrations } from './schema.ts';
import { bytesOf } from './stepBytes.ts';

type OperationOutcome = 'started' | 'completed' | 'failed' | 'cancelled';

const countOperation = (db: Database, siteId: string, hour: string, operation: string, outcome: OperationOutcome) =>
  statement(
    db,
    `INSERT INTO trend_operations (site_id, hour, operation, ${outcome}) VALUES (?, ?, ?, 1)
     ON CONFLICT (site_id, hour, operation) DO UPDATE SET ${outcome} = ${outcome} + 1`,
  ).run(siteId, hour, operation);

const countFailure = (db: Database, siteId: string, hour: string, code: string, of: 'workflows' | 'steps') =>
  statement(
    db,
    `INSERT INTO trend_failures (site_id, hour, code, ${of}) VALUES (?, ?, ?, 1)
     ON CONFLICT (site_id, hour, code) DO UPDATE SET ${of} = ${of} + 1`,
  ).run(siteId, hour, code);

const workflowOf = (db: Database, workflowId: string) =>
  statement(db, 'SELECT site_id AS siteId, operation FROM trend_workflows WHERE workflow_id = ?').get(workflowId) as
    { siteId: string; operation: string } | undefined;

/**
 * The waiting queue of a site grew or shrank by one (`requested`: one more asked, `admitted`: one got its slot); its depth
 * is recounted. An hour's first change also counts the depth the hour started with in its peak.
 */
function countWaiting(db: Database, siteId: string, hour: string, change: { requested: number; admitted: number; grew: boolean }): void {
  const depth = statement(db, 'SELECT count(*) FROM trend_waiting WHERE site_id = ?').pluck().get(siteId) as number;
  const before = change.grew ? depth - 1 : depth + 1;
  statement(
    db,
    `INSERT INTO trend_capacity (site_id, hour, requested, admitted, peak_waiting, waiting) VALUES (@siteId, @hour, @requested, @admitted, max(@before, @depth), @depth)
     ON CONFLICT (site_id, hour) DO UPDATE SET requested = requested + @requested, admitted = admitted + @admitted,
       peak_waiting = max(peak_waiting, @depth), waiting = @depth`,
  ).run({ siteId, hour, depth, before, requested: change.requested, admitted: change.admitted });
}

/** An operation left the queue (admitted, or ended before it was). */
function leaveQueue(db: Database, workflowId: string, hour: string, admitted: boolean): void {
  const row = statement(db, 'DELETE FROM trend_waiting WHERE workflow_id = ? RETURNING site_id AS siteId').get(workflowId) as { siteId: string } | undefined;
  if (row) countWaiting(db, row.siteId, hour, { requested: 0, admitted: admitted ? 1 : 0, grew: false });
}

function endWorkflow(db: Database, workflowId: string, hour: string, outcome: Exclude<OperationOutcome, 'started'>): { siteId: string } | undefined {
  const wf = workflowOf(db, workflowId);
  if (!wf) return undefined;
  countOperation(db, wf.siteId, hour, wf.operation, outcome);
  statement(db, 'DELETE FROM trend_attempts WHERE workflow_id = ?').run(workflowId);
  statement(db, 'DELETE FROM trend_workflows WHERE workflow_id = ?').run(workflowId);
  return wf;
}

/**
 * The `trends` read model: workflow and step events folded into hourly buckets per site, by the log time of the event
 * (`metadata.time`, stored with it, so a rebuild buckets exactly as live projection did). Operations started and ended,
 * failures by code, succeeded steps' durations (`durationHistogram.ts`) and bytes, and the capacity queue.
 */
export const trendsProjection = defineProjection({
  name: 'trends',
  migrations: trendsMigrations,
  apply(db, event, metadata) {
    const at = epochMsOf(metadata.time);
    if (at === null) return;
    const hour = hourOf(at);
    switch (event.type) {
      case 'NodeOperationRequested': {
        const { workflowId, siteId, operation } = event.data;
        if (!cappedOperations[operation]) return;
        const added = statement(db, 'INSERT OR IGNORE INTO trend_waiting (workflow_id, site_id) VALUES (?, ?)').run(workflowId, siteId);
        if (added.changes > 0) countWaiting(db, siteId, hour, { requested: 1, admitted: 0, grew: true });
        return;
      }
      case 'WorkflowStarted': {
        const { workflowId, siteId, operation } = event.data;
        const added = statement(db, 'INSERT OR IGNORE INTO trend_workflows (workflow_id, site_id, operation) VALUES (?, ?, ?)').run(
          workflowId,
          siteId,
          operation,
        );
        if (added.changes > 0) countOperation(db, siteId, hour, operation, 'started');
        leaveQueue(db, workflowId, hour, true);
        return;
      }
      case 'NodeOperationCompleted':
      case 'NodeOperationFailed':
      case 'NodeOperationCancelled':
        return leaveQueue(db, event.data.workflowId, hour, false);
      case 'StepStarted': {
        const { workflowId, stepIndex, attempt } = event.data;
        // A resumed attempt starts again with the start it had: the first one counts.
        const started = (event.data.startedAt !== undefined ? epochMsOf(event.data.startedAt) : null) ?? at;
        statement(db, 'INSERT OR IGNORE INTO trend_attempts (workflow_id, step_index, attempt, started_ms) VALUES (?, ?, ?, ?)').run(
          workflowId,
          stepIndex,
          attempt,
          started,
        );
        return;
      }
      case 'StepSucceeded': {
        const { workflowId, stepIndex, attempt, stepId } = event.data;
        const wf = workflowOf(db, workflowId);
        const attemptRow = statement(db, 'DELETE FROM trend_attempts WHERE workflow_id = ? AND step_index = ? AND attempt = ? RETURNING started_ms').get(
          workflowId,
          stepIndex,
          attempt,
        ) as { started_ms: number } | undefined;
        if (!wf || !attemptRow) return;
        const durationMs = Math.max(0, at - attemptRow.started_ms);
        const bytes = bytesOf(event.data.output);
        statement(
          db,
          `INSERT INTO trend_steps (site_id, hour, step_id, succeeded, bytes, bytes_ms) VALUES (@siteId, @hour, @stepId, 1, @bytes, @bytesMs)
           ON CONFLICT (site_id, hour, step_id) DO UPDATE SET succeeded = succeeded + 1, bytes = bytes + @bytes, bytes_ms = bytes_ms + @bytesMs`,
        ).run({ siteId: wf.siteId, hour, stepId, bytes: bytes ?? 0, bytesMs: bytes === null ? 0 : durationMs });
        statement(
          db,
          `INSERT INTO trend_step_bins (site_id, hour, step_id, bin, count) VALUES (?, ?, ?, ?, 1)
           ON CONFLICT (site_id, hour, step_id, bin) DO UPDATE SET count = count + 1`,
        ).run(wf.siteId, hour, stepId, binOf(durationMs));
        return;
      }
      case 'StepFailed': {
        const { workflowId, stepIndex, attempt, code } = event.data;
        statement(db, 'DELETE FROM trend_attempts WHERE workflow_id = ? AND step_index = ? AND attempt = ?').run(workflowId, stepIndex, attempt);
        const wf = workflowOf(db, workflowId);
        if (wf) countFailure(db, wf.siteId, hour, code, 'steps');
        return;
      }
      case 'WorkflowCompleted':
        endWorkflow(db, event.data.workflowId, hour, 'completed');
        return;
      case 'WorkflowCancelled':
        endWorkflow(db, event.data.workflowId, hour, 'cancelled');
        return;
      case 'WorkflowFailed': {
        const wf = endWorkflow(db, event.data.workflowId, hour, 'failed');
        if (wf) countFailure(db, wf.siteId, hour, event.data.code, 'workflows');
        return;
      }
      default:
        return;
    }
  },
});
