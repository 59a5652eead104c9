import type { Database } from 'better-sqlite3';
import type { WorkflowStepView, WorkflowView } from '../../schemas/metal/workflowViews.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { decodeCursor, encodeCursor } from '../runtime/cursor.ts';

interface WorkflowRow {
  workflow_id: string;
  node_id: string;
  site_id: string;
  operation: string;
  profile_id: string;
  profile_version: number;
  state: WorkflowView['state'];
  failed_step: string | null;
  error: string | null;
  started_at: string;
  ended_at: string | null;
  last_seq: number;
}

interface StepRow {
  step_index: number;
  step_id: string;
  runs_on: string;
  destructive: number;
  params: string;
  state: WorkflowStepView['state'];
  attempts: number;
  output: string | null;
  error_code: string | null;
  error: string | null;
  rejected_results: number;
  started_at: string | null;
  ended_at: string | null;
}

const toStep = (r: StepRow): WorkflowStepView => ({
  stepIndex: r.step_index,
  stepId: r.step_id,
  runsOn: r.runs_on,
  destructive: r.destructive === 1,
  params: JSON.parse(r.params) as Record<string, unknown>,
  state: r.state,
  attempts: r.attempts,
  output: r.output === null ? null : (JSON.parse(r.output) as unknown),
  errorCode: r.error_code,
  error: r.error,
  rejectedResults: r.rejected_results,
  startedAt: r.started_at,
  endedAt: r.ended_at,
});

function toView(db: Database, r: WorkflowRow): WorkflowView {
  const steps = db.prepare('SELECT * FROM workflow_steps WHERE workflow_id = ? ORDER BY step_index').all(r.workflow_id) as StepRow[];
  return {
    workflowId: r.workflow_id,
    nodeId: r.node_id,
    siteId: r.site_id,
    operation: r.operation,
    profile: { id: r.profile_id, version: r.profile_version },
    state: r.state,
    failedStep: r.failed_step,
    error: r.error,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    lastSeq: r.last_seq,
    steps: steps.map(toStep),
  };
}

export function getWorkflow(db: Database, workflowId: string): WorkflowView | undefined {
  const row = db.prepare('SELECT * FROM workflows WHERE workflow_id = ?').get(workflowId) as WorkflowRow | undefined;
  return row && toView(db, row);
}

/** A node's workflows, newest first. */
export function listNodeWorkflows(db: Database, nodeId: string, limit = 100): WorkflowView[] {
  const rows = db.prepare('SELECT * FROM workflows WHERE node_id = ? ORDER BY last_seq DESC LIMIT ?').all(nodeId, limit) as WorkflowRow[];
  return rows.map((r) => toView(db, r));
}

function workflowCursorKey(cursor: string): [string, string] {
  const key = (() => {
    try {
      return JSON.parse(decodeCursor(cursor)) as unknown;
    } catch (err) {
      throw new PlatformError('VALIDATION_FAILED', 'cursor is not one this API issued', { cause: err });
    }
  })();
  if (!Array.isArray(key) || key.length !== 2 || !key.every((k) => typeof k === 'string'))
    throw new PlatformError('VALIDATION_FAILED', 'cursor is not one this API issued');
  return key as [string, string];
}

/** The fleet's workflows, newest first, optionally in one state; `limit` per page, resumed after `cursor`. */
export function listWorkflows(
  db: Database,
  filter: { state?: WorkflowView['state']; cursor?: string; limit: number },
): { items: WorkflowView[]; nextCursor: string | null } {
  // The cursor is the last row's (started_at, workflow_id): a stable key, unlike last_seq, which moves as steps run.
  const [afterStart, afterId] = filter.cursor ? workflowCursorKey(filter.cursor) : [null, null];
  const rows = db
    .prepare(
      `SELECT * FROM workflows
       WHERE (@afterStart IS NULL OR started_at < @afterStart OR (started_at = @afterStart AND workflow_id < @afterId))
         AND (@state IS NULL OR state = @state)
       ORDER BY started_at DESC, workflow_id DESC LIMIT @limit`,
    )
    .all({ afterStart, afterId, state: filter.state ?? null, limit: filter.limit + 1 }) as WorkflowRow[];
  const page = rows.slice(0, filter.limit);
  const last = page.at(-1);
  const nextCursor = rows.length > filter.limit && last ? encodeCursor(JSON.stringify([last.started_at, last.workflow_id])) : null;
  return { items: page.map((r) => toView(db, r)), nextCursor };
}
