import type { Database } from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { applyBatch, projectEntry, type ProjectedMessage } from '../../services/projectors/applyBatch.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWriter, readCheckpoint } from '../../projections/runtime/readModelDatabase.ts';
import { trendsProjection } from '../../projections/trends/projector.ts';
import { trendsOf } from '../../projections/trends/queries.ts';
import type { StoredEvent } from '../../schemas/envelope.ts';
import { fakeWipeReport } from '../metal/fakeAgent.ts';

const hour = (h: number, minute = 0, second = 0) => Date.UTC(2026, 11, 6, h, minute, second);
const iso = (ms: number) => new Date(ms).toISOString();

/** One event per message, at `at`; versions as the catalog has them now. */
function log() {
  const messages: ProjectedMessage[] = [];
  const add = (at: number, type: string, data: unknown, version = 1) => {
    const seq = messages.length + 1;
    const event: StoredEvent = {
      type,
      version,
      data,
      metadata: {
        eventId: `e-${seq}`,
        aggregateType: 'x.y',
        aggregateId: 'id',
        commandId: `c-${seq}`,
        commandName: 't',
        correlationId: `c-${seq}`,
        causationId: `c-${seq}`,
        actor: 't',
        time: iso(at),
      },
    };
    messages.push(projectEntry({ seq, subject: `bc.evt.test.${seq}`, messageId: `c-${seq}`, batch: { events: [event] } }).message);
  };
  const step = (id: string) => ({ id, runsOn: 'node', params: {}, timeoutMs: 60_000, retry: { maxAttempts: 3, backoffMs: 0 }, destructive: false });
  const profile = { id: 'p', version: 1 };
  return {
    messages,
    requested: (at: number, workflowId: string, siteId: string, operation: string, tenantId?: string) =>
      add(at, 'NodeOperationRequested', { nodeId: `n-${workflowId}`, siteId, operation, workflowId, inputs: {}, ...(tenantId ? { tenantId } : {}) }),
    started: (at: number, workflowId: string, siteId: string, operation: string, steps: string[]) =>
      add(at, 'WorkflowStarted', { workflowId, nodeId: `n-${workflowId}`, siteId, operation, profile, steps: steps.map(step), startedAt: iso(at) }, 2),
    stepStarted: (at: number, workflowId: string, stepIndex: number, stepId: string, attempt = 1) =>
      add(at, 'StepStarted', { workflowId, stepIndex, stepId, attempt, startedAt: iso(at) }),
    stepSucceeded: (at: number, workflowId: string, stepIndex: number, stepId: string, output: unknown = { ok: true }, attempt = 1) =>
      add(at, 'StepSucceeded', { workflowId, stepIndex, stepId, attempt, output }),
    stepFailed: (at: number, workflowId: string, stepIndex: number, stepId: string, code: string, retryable: boolean, attempt = 1) =>
      add(at, 'StepFailed', { workflowId, stepIndex, stepId, attempt, code, message: 'no', retryable }),
    completed: (at: number, workflowId: string) => add(at, 'WorkflowCompleted', { workflowId }),
    failed: (at: number, workflowId: string, code: string) => add(at, 'WorkflowFailed', { workflowId, failedStep: 's', stepIndex: 0, code, reason: 'no' }),
    cancelledBeforeStart: (at: number, workflowId: string) =>
      add(at, 'NodeOperationCancelled', { nodeId: `n-${workflowId}`, operation: 'deploy', workflowId, reason: 'x', state: 'ready' }),
  };
}

const open: Database[] = [];
const project = (messages: readonly ProjectedMessage[]) => {
  const db = openWriter(':memory:', trendsProjection);
  open.push(db);
  applyBatch(db, trendsProjection, messages);
  return db;
};
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

const GiB = 1024 ** 3;

describe('trends read model', () => {
  it('buckets operations, failures by code, step durations and bytes, and the capacity queue by site and hour', () => {
    const l = log();
    // Hour 10 at dc1: two deploys asked for, one admitted, one cancelled while waiting; a release at dc2.
    l.requested(hour(10, 0), 'd1', 'dc1', 'deploy');
    l.requested(hour(10, 1), 'd2', 'dc1', 'deploy');
    l.requested(hour(10, 2), 'r1', 'dc2', 'release');
    l.started(hour(10, 5), 'd1', 'dc1', 'deploy', ['image.write', 'power.set']);
    l.started(hour(10, 6), 'r1', 'dc2', 'release', ['disk.wipe']);
    // image.write: 100 s for 10 GiB; power.set fails once (retried), then succeeds after 2 s.
    l.stepStarted(hour(10, 10), 'd1', 0, 'image.write');
    l.stepSucceeded(hour(10, 10, 100), 'd1', 0, 'image.write', { disk: '/dev/sda', source: 'x', bytesWritten: 10 * GiB, sha256: 'a', verified: true });
    l.stepStarted(hour(10, 20), 'd1', 1, 'power.set');
    l.stepFailed(hour(10, 20, 1), 'd1', 1, 'power.set', 'BMC_UNREACHABLE', true);
    l.stepStarted(hour(10, 30), 'd1', 1, 'power.set', 2);
    l.stepSucceeded(hour(10, 30, 2), 'd1', 1, 'power.set', { ok: true }, 2);
    // Completed in the next hour: counted there.
    l.completed(hour(11, 0, 5), 'd1');
    l.cancelledBeforeStart(hour(11, 10), 'd2');
    // The release's wipe takes 50 s and erases the fake report's disks; the workflow fails after it.
    l.stepStarted(hour(10, 40), 'r1', 0, 'disk.wipe');
    l.stepSucceeded(hour(10, 40, 50), 'r1', 0, 'disk.wipe', { ...fakeWipeReport, attested: true, agentId: 'a' });
    l.failed(hour(11, 20), 'r1', 'WIPE_UNATTESTED');
    const db = project(l.messages);

    const dc1 = trendsOf(db, { siteId: 'dc1', tenantId: null, fromMs: hour(9, 30), toMs: hour(11, 30) });
    expect(dc1.hours).toEqual([iso(hour(9)), iso(hour(10)), iso(hour(11))]);
    expect([dc1.from, dc1.to]).toEqual([iso(hour(9)), iso(hour(12))]);
    expect(dc1.operations).toEqual([
      { hour: iso(hour(10)), operation: 'deploy', started: 1, completed: 0, failed: 0, cancelled: 0 },
      { hour: iso(hour(11)), operation: 'deploy', started: 0, completed: 1, failed: 0, cancelled: 0 },
    ]);
    expect(dc1.failures).toEqual([{ hour: iso(hour(10)), code: 'BMC_UNREACHABLE', workflows: 0, steps: 1 }]);
    expect(dc1.capacity).toEqual([
      { hour: iso(hour(9)), requested: 0, admitted: 0, peakWaiting: 0, waiting: 0 },
      { hour: iso(hour(10)), requested: 2, admitted: 1, peakWaiting: 2, waiting: 1 },
      { hour: iso(hour(11)), requested: 0, admitted: 0, peakWaiting: 1, waiting: 0 },
    ]);
    const image = dc1.stepTotals.find((s) => s.stepId === 'image.write')!;
    expect(image).toMatchObject({ count: 1, bytes: 10 * GiB, bytesPerSecond: (10 * GiB) / 100 });
    expect(Math.abs(image.p50Ms - 100_000) / 100_000).toBeLessThanOrEqual(dc1.durationRelativeError);
    const power = dc1.stepTotals.find((s) => s.stepId === 'power.set')!;
    expect(power).toMatchObject({ count: 1, bytes: 0, bytesPerSecond: null });
    expect(Math.abs(power.p95Ms - 2_000) / 2_000).toBeLessThanOrEqual(dc1.durationRelativeError);
    expect(dc1.steps.map((s) => [s.hour, s.stepId, s.count])).toEqual([
      [iso(hour(10)), 'image.write', 1],
      [iso(hour(10)), 'power.set', 1],
    ]);

    const all = trendsOf(db, { siteId: null, tenantId: null, fromMs: hour(10), toMs: hour(12) });
    expect(all.failures).toEqual([
      { hour: iso(hour(10)), code: 'BMC_UNREACHABLE', workflows: 0, steps: 1 },
      { hour: iso(hour(11)), code: 'WIPE_UNATTESTED', workflows: 1, steps: 0 },
    ]);
    expect(all.operations.filter((o) => o.operation === 'release')).toEqual([
      { hour: iso(hour(10)), operation: 'release', started: 1, completed: 0, failed: 0, cancelled: 0 },
      { hour: iso(hour(11)), operation: 'release', started: 0, completed: 0, failed: 1, cancelled: 0 },
    ]);
    const wiped = fakeWipeReport.disks.reduce((sum, d) => sum + d.verifiedBytes, 0);
    expect(all.stepTotals.find((s) => s.stepId === 'disk.wipe')).toMatchObject({ count: 1, bytes: wiped, bytesPerSecond: wiped / 50 });
    expect(all.capacity.map((c) => [c.requested, c.admitted, c.peakWaiting, c.waiting])).toEqual([
      [3, 2, 3, 1],
      [0, 0, 1, 0],
    ]);
    // What the fold kept between events is gone once every workflow ended.
    for (const table of ['trend_workflows', 'trend_attempts', 'trend_waiting'])
      expect(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), table).toBe(0);
  });

  it('carries the queue depth through hours in which nothing entered or left it, from before the range too', () => {
    const l = log();
    l.requested(hour(8, 10), 'd1', 'dc1', 'deploy');
    l.requested(hour(8, 20), 'd2', 'dc1', 'deploy');
    l.started(hour(12, 0), 'd1', 'dc1', 'deploy', ['power.set']);
    const db = project(l.messages);
    const view = trendsOf(db, { siteId: 'dc1', tenantId: null, fromMs: hour(10), toMs: hour(13) });
    expect(view.capacity.map((c) => [c.hour, c.peakWaiting, c.waiting])).toEqual([
      [iso(hour(10)), 2, 2],
      [iso(hour(11)), 2, 2],
      [iso(hour(12)), 2, 1],
    ]);
  });

  it('leaves uncapped operations out of the queue and counts a step only once its attempt started', () => {
    const l = log();
    l.requested(hour(10), 'i1', 'dc1', 'inspect');
    l.started(hour(10, 1), 'i1', 'dc1', 'inspect', ['inventory.read']);
    l.stepSucceeded(hour(10, 2), 'i1', 0, 'inventory.read');
    const view = trendsOf(project(l.messages), { siteId: 'dc1', tenantId: null, fromMs: hour(10), toMs: hour(11) });
    expect(view.capacity).toEqual([{ hour: iso(hour(10)), requested: 0, admitted: 0, peakWaiting: 0, waiting: 0 }]);
    expect(view.stepTotals).toEqual([]);
    expect(view.operations).toEqual([{ hour: iso(hour(10)), operation: 'inspect', started: 1, completed: 0, failed: 0, cancelled: 0 }]);
  });

  it("gives a tenant its own operations' figures and share of the queue, staff the whole site", () => {
    const l = log();
    l.requested(hour(10, 1), 'a1', 'dc1', 'deploy', 'acme');
    l.requested(hour(10, 2), 'b1', 'dc1', 'deploy', 'globex');
    l.requested(hour(10, 3), 'b2', 'dc1', 'deploy', 'globex');
    l.requested(hour(10, 4), 'o1', 'dc1', 'deploy');
    l.started(hour(10, 5), 'a1', 'dc1', 'deploy', ['image.write']);
    l.stepStarted(hour(10, 6), 'a1', 0, 'image.write');
    l.stepFailed(hour(10, 7), 'a1', 0, 'image.write', 'DRIVER_ERROR', false);
    l.failed(hour(10, 8), 'a1', 'DRIVER_ERROR');
    l.started(hour(10, 10), 'b1', 'dc1', 'deploy', ['power.set']);
    l.stepStarted(hour(10, 11), 'b1', 0, 'power.set');
    l.stepSucceeded(hour(10, 12), 'b1', 0, 'power.set');
    l.completed(hour(10, 13), 'b1');
    const db = project(l.messages);
    const of = (tenantId: string | null) => trendsOf(db, { siteId: null, tenantId, fromMs: hour(10), toMs: hour(11) });
    const ops = (tenantId: string | null) => of(tenantId).operations.map((o) => [o.started, o.completed, o.failed]);
    expect(ops('acme')).toEqual([[1, 0, 1]]);
    expect(of('acme').failures).toEqual([{ hour: iso(hour(10)), code: 'DRIVER_ERROR', workflows: 1, steps: 1 }]);
    expect(of('acme').stepTotals).toEqual([]);
    expect(ops('globex')).toEqual([[1, 1, 0]]);
    expect(of('globex').failures).toEqual([]);
    expect(of('globex').stepTotals.map((s) => [s.stepId, s.count])).toEqual([['power.set', 1]]);
    expect(ops(null)).toEqual([[2, 1, 1]]);
    expect(ops('initech')).toEqual([]);
    // The queue: 4 asked for at once, each tenant sees its own share of it; staff the whole site's peak.
    const queue = (tenantId: string | null) => of(tenantId).capacity.map((c) => [c.requested, c.admitted, c.peakWaiting, c.waiting]);
    expect(queue('acme')).toEqual([[1, 1, 1, 0]]);
    expect(queue('globex')).toEqual([[2, 1, 2, 1]]);
    expect(queue(null)).toEqual([[4, 2, 4, 2]]);
    expect(queue('initech')).toEqual([[0, 0, 0, 0]]);
    expect(of('acme').tenantId).toBe('acme');
  });

  it('replays the log into version 2: v1 buckets had no tenant, so the migration empties them and goes back to 0', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trends-v1-'));
    try {
      const file = join(dir, 'trends.db');
      const l = log();
      l.requested(hour(10, 1), 'a1', 'dc1', 'deploy', 'acme');
      l.started(hour(10, 2), 'a1', 'dc1', 'deploy', ['power.set']);
      // A v1 file: the first migration alone, folded by a fold of the v1 tables' shape (site-keyed buckets).
      const v1 = openWriter(file, { ...trendsProjection, migrations: trendsProjection.migrations.slice(0, 1), apply: () => undefined });
      v1.prepare(`INSERT INTO trend_operations (site_id, hour, operation, started) VALUES ('dc1', ?, 'deploy', 1)`).run(iso(hour(10)));
      applyBatch(v1, { ...trendsProjection, apply: () => undefined }, l.messages);
      expect(readCheckpoint(v1).seq).toBe(2);
      v1.close();
      const v2 = openWriter(file, trendsProjection);
      open.push(v2);
      expect(v2.pragma('user_version', { simple: true })).toBe(2);
      expect(readCheckpoint(v2).seq).toBe(0);
      expect(v2.prepare('SELECT count(*) FROM trend_operations').pluck().get()).toBe(0);
      applyBatch(v2, trendsProjection, l.messages);
      expect(trendsOf(v2, { siteId: null, tenantId: 'acme', fromMs: hour(10), toMs: hour(11) }).operations).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
