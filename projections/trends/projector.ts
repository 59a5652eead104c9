import type { Database } from 'better-sqlite3';
import { cappedOperations } from '../../schemas/metal/workflow.ts';
import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { binOf } from './durationHistogram.ts';
import { epochMsOf, hourOf } from './hours.ts';
import { trendsMigrations } from './schema.ts';
import { bytesOf } from './stepBytes.ts';

type OperationOutcome = 'started' | 'completed' | 'failed' | 'cancelled';

/** Where a workflow's figures go: its site, and the tenant it ran for ('' for none). */
interface Owner {
  readonly siteId: string;
  readonly tenantId: string;
}

const countOperation = (db: Database, at: Owner, hour: string, operation: string, outcome: OperationOutcome) =>
  statement(
    db,
    `INSERT INTO trend_operations (site_id, tenant_id, hour, operation, ${outcome}) VALUES (?, ?, ?, ?, 1)
     ON CONFLICT (site_id, tenant_id, hour, operation) DO UPDATE SET ${outcome} = ${outcome} + 1`,
  ).run(at.siteId, at.tenantId, hour, operation);

const countFailure = (db: Database, at: Owner, hour: string, code: string, of: 'workflows' | 'steps') =>
  statement(
    db,
    `INSERT INTO trend_failures (site_id, tenant_id, hour, code, ${of}) VALUES (?, ?, ?, ?, 1)
     ON CONFLICT (site_id, tenant_id, hour, code) DO UPDATE SET ${of} = ${of} + 1`,
  ).run(at.siteId, at.tenantId, hour, code);

const workflowOf = (db: Database, workflowId: string) =>
  statement(db, 'SELECT site_id AS siteId, tenant_id AS tenantId, operation FROM trend_workflows WHERE workflow_id = ?').get(workflowId) as
    (Owner & { operation: string }) | undefined;

/** The tenant an operation was asked for (`NodeOperationRequested`), taken once its workflow starts or it ends. */
const takeRequestTenant = (db: Database, workflowId: string): string | undefined =>
  (statement(db, 'DELETE FROM trend_requests WHERE workflow_id = ? RETURNING tenant_id').pluck().get(workflowId) as string | undefined) ?? undefined;

/**
 * The waiting queue of a site grew or shrank by one (`requested`: one more asked, `admitted`: one got its slot); its depth
 * is recounted, for the whole site ('*') and for the tenant's own share of it. An hour's first change also counts the
 * depth the hour started with in its peak.
 */
function countWaiting(db: Database, at: Owner, hour: string, change: { requested: number; admitted: number; grew: boolean }): void {
  for (const tenantId of at.tenantId === '' ? ['*'] : ['*', at.tenantId]) {
    const depth = statement(db, `SELECT count(*) FROM trend_waiting WHERE site_id = ? AND (? = '*' OR tenant_id = ?)`)
      .pluck()
      .get(at.siteId, tenantId, tenantId) as number;
    const before = change.grew ? depth - 1 : depth + 1;
    statement(
      db,
      `INSERT INTO trend_capacity (site_id, tenant_id, hour, requested, admitted, peak_waiting, waiting)
       VALUES (@siteId, @tenantId, @hour, @requested, @admitted, max(@before, @depth), @depth)
       ON CONFLICT (site_id, tenant_id, hour) DO UPDATE SET requested = requested + @requested, admitted = admitted + @admitted,
         peak_waiting = max(peak_waiting, @depth), waiting = @depth`,
    ).run({ siteId: at.siteId, tenantId, hour, depth, before, requested: change.requested, admitted: change.admitted });
  }
}

/** An operation left the queue (admitted, or ended before it was). */
function leaveQueue(db: Database, workflowId: string, hour: string, admitted: boolean): void {
  const row = statement(db, 'DELETE FROM trend_waiting WHERE workflow_id = ? RETURNING site_id AS siteId, tenant_id AS tenantId').get(workflowId) as
    Owner | undefined;
  if (row) countWaiting(db, row, hour, { requested: 0, admitted: admitted ? 1 : 0, grew: false });
}

function endWorkflow(db: Database, workflowId: string, hour: string, outcome: Exclude<OperationOutcome, 'started'>): Owner | undefined {
  const wf = workflowOf(db, workflowId);
  if (!wf) return undefined;
  countOperation(db, wf, hour, wf.operation, outcome);
  statement(db, 'DELETE FROM trend_attempts WHERE workflow_id = ?').run(workflowId);
  statement(db, 'DELETE FROM trend_workflows WHERE workflow_id = ?').run(workflowId);
  return wf;
}

/**
 * The `trends` read model: workflow and step events folded into hourly buckets per site and tenant (the tenant the
 * operation was asked for, `NodeOperationRequested.tenantId`, or the instance's for a VPS workflow), by the log time of the event
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
        const tenantId = event.data.tenantId ?? '';
        if (tenantId !== '') statement(db, 'INSERT OR REPLACE INTO trend_requests (workflow_id, tenant_id) VALUES (?, ?)').run(workflowId, tenantId);
        if (!cappedOperations[operation]) return;
        const added = statement(db, 'INSERT OR IGNORE INTO trend_waiting (workflow_id, site_id, tenant_id) VALUES (?, ?, ?)').run(workflowId, siteId, tenantId);
        if (added.changes > 0) countWaiting(db, { siteId, tenantId }, hour, { requested: 1, admitted: 0, grew: true });
        return;
      }
      case 'WorkflowStarted': {
        const { workflowId, siteId, operation } = event.data;
        const tenantId = event.data.instance?.tenantId ?? takeRequestTenant(db, workflowId) ?? '';
        const added = statement(db, 'INSERT OR IGNORE INTO trend_workflows (workflow_id, site_id, tenant_id, operation) VALUES (?, ?, ?, ?)').run(
          workflowId,
          siteId,
          tenantId,
          operation,
        );
        if (added.changes > 0) countOperation(db, { siteId, tenantId }, hour, operation, 'started');
        leaveQueue(db, workflowId, hour, true);
        return;
      }
      case 'NodeOperationCompleted':
      case 'NodeOperationFailed':
      case 'NodeOperationCancelled':
        takeRequestTenant(db, event.data.workflowId);
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
          `INSERT INTO trend_steps (site_id, tenant_id, hour, step_id, succeeded, bytes, bytes_ms) VALUES (@siteId, @tenantId, @hour, @stepId, 1, @bytes, @bytesMs)
           ON CONFLICT (site_id, tenant_id, hour, step_id) DO UPDATE SET succeeded = succeeded + 1, bytes = bytes + @bytes, bytes_ms = bytes_ms + @bytesMs`,
        ).run({ siteId: wf.siteId, tenantId: wf.tenantId, hour, stepId, bytes: bytes ?? 0, bytesMs: bytes === null ? 0 : durationMs });
        statement(
          db,
          `INSERT INTO trend_step_bins (site_id, tenant_id, hour, step_id, bin, count) VALUES (?, ?, ?, ?, ?, 1)
           ON CONFLICT (site_id, tenant_id, hour, step_id, bin) DO UPDATE SET count = count + 1`,
        ).run(wf.siteId, wf.tenantId, hour, stepId, binOf(durationMs));
        return;
      }
      case 'StepFailed': {
        const { workflowId, stepIndex, attempt, code } = event.data;
        statement(db, 'DELETE FROM trend_attempts WHERE workflow_id = ? AND step_index = ? AND attempt = ?').run(workflowId, stepIndex, attempt);
        const wf = workflowOf(db, workflowId);
        if (wf) countFailure(db, wf, hour, code, 'steps');
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
        if (wf) countFailure(db, wf, hour, event.data.code, 'workflows');
        return;
      }
      default:
        return;
    }
  },
});
