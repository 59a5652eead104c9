import type { Database } from 'better-sqlite3';
import type { CapacityTrend, FailureTrend, OperationTrend, StepTrend, TrendsView } from '../../schemas/metal/trendViews.ts';
import { readCheckpoint } from '../runtime/readModelDatabase.ts';
import { durationRelativeError, percentileOf } from './durationHistogram.ts';
import { hoursBetween, msPerHour } from './hours.ts';

/**
 * The rows of one site, or of every site when none is asked for; of one tenant's operations, or of everyone's (and
 * no one's) for staff.
 */
const siteFilter = '(@siteId IS NULL OR site_id = @siteId) AND (@tenantId IS NULL OR tenant_id = @tenantId)';
/** The capacity queue is kept whole per site ('*': peaks do not add up over tenants) and as each tenant's share. */
const queueFilter = `(@siteId IS NULL OR site_id = @siteId) AND tenant_id = coalesce(@tenantId, '*')`;

type Scope = { siteId: string | null; tenantId: string | null; from: string; to: string };

interface StepRow {
  hour: string;
  step_id: string;
  succeeded: number;
  bytes: number;
  bytes_ms: number;
}

function stepTrend(stepId: string, sums: { succeeded: number; bytes: number; bytesMs: number }, bins: Map<number, number>): StepTrend {
  return {
    stepId,
    count: sums.succeeded,
    p50Ms: percentileOf(bins, 0.5),
    p95Ms: percentileOf(bins, 0.95),
    bytes: sums.bytes,
    // Bytes over the time of the steps that moved them; a step with bytes that took 0 ms says nothing of a rate.
    bytesPerSecond: sums.bytesMs > 0 ? (sums.bytes * 1000) / sums.bytesMs : null,
  };
}

function stepTrends(db: Database, args: Scope): Pick<TrendsView, 'steps' | 'stepTotals'> {
  const rows = db
    .prepare(
      `SELECT hour, step_id, sum(succeeded) AS succeeded, sum(bytes) AS bytes, sum(bytes_ms) AS bytes_ms FROM trend_steps
       WHERE ${siteFilter} AND hour >= @from AND hour < @to GROUP BY hour, step_id ORDER BY hour, step_id`,
    )
    .all(args) as StepRow[];
  const binRows = db
    .prepare(
      `SELECT hour, step_id, bin, sum(count) AS count FROM trend_step_bins
       WHERE ${siteFilter} AND hour >= @from AND hour < @to GROUP BY hour, step_id, bin`,
    )
    .all(args) as { hour: string; step_id: string; bin: number; count: number }[];
  const hourBins = new Map<string, Map<number, number>>();
  const totalBins = new Map<string, Map<number, number>>();
  const add = (to: Map<string, Map<number, number>>, key: string, bin: number, count: number) => {
    const bins = to.get(key) ?? to.set(key, new Map()).get(key)!;
    bins.set(bin, (bins.get(bin) ?? 0) + count);
  };
  for (const r of binRows) {
    add(hourBins, `${r.hour} ${r.step_id}`, r.bin, r.count);
    add(totalBins, r.step_id, r.bin, r.count);
  }
  const totals = new Map<string, { succeeded: number; bytes: number; bytesMs: number }>();
  const steps = rows.map((r) => {
    const sum = totals.get(r.step_id) ?? totals.set(r.step_id, { succeeded: 0, bytes: 0, bytesMs: 0 }).get(r.step_id)!;
    sum.succeeded += r.succeeded;
    sum.bytes += r.bytes;
    sum.bytesMs += r.bytes_ms;
    const trend = stepTrend(
      r.step_id,
      { succeeded: r.succeeded, bytes: r.bytes, bytesMs: r.bytes_ms },
      hourBins.get(`${r.hour} ${r.step_id}`) ?? new Map<number, number>(),
    );
    return { hour: r.hour, ...trend };
  });
  const stepTotals = [...totals]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([stepId, sums]) => stepTrend(stepId, sums, totalBins.get(stepId) ?? new Map<number, number>()));
  return { steps, stepTotals };
}

/**
 * The capacity queue per hour, every hour of the range: an hour in which nothing entered or left the queue keeps the
 * depth the hour before ended with (carried from before `from` too).
 */
function capacityTrends(db: Database, args: Scope, hours: readonly string[]): CapacityTrend[] {
  const rows = db
    .prepare(
      `SELECT site_id, hour, requested, admitted, peak_waiting, waiting FROM trend_capacity
       WHERE ${queueFilter} AND hour >= @from AND hour < @to ORDER BY hour`,
    )
    .all(args) as { site_id: string; hour: string; requested: number; admitted: number; peak_waiting: number; waiting: number }[];
  const before = db
    .prepare(
      `SELECT site_id, waiting FROM trend_capacity c
       WHERE ${queueFilter} AND hour = (SELECT max(hour) FROM trend_capacity d WHERE d.site_id = c.site_id AND d.tenant_id = c.tenant_id AND d.hour < @from)`,
    )
    .all(args) as { site_id: string; waiting: number }[];
  const depth = new Map(before.map((r) => [r.site_id, r.waiting]));
  const byHour = new Map<string, typeof rows>();
  for (const r of rows) (byHour.get(r.hour) ?? byHour.set(r.hour, []).get(r.hour)!).push(r);
  return hours.map((hour) => {
    const here = byHour.get(hour) ?? [];
    const touched = new Set(here.map((r) => r.site_id));
    // Sites with no row this hour sat at their last depth all hour: that is their peak too.
    const idle = [...depth].filter(([site]) => !touched.has(site)).reduce((sum, [, n]) => sum + n, 0);
    for (const r of here) depth.set(r.site_id, r.waiting);
    return {
      hour,
      requested: here.reduce((sum, r) => sum + r.requested, 0),
      admitted: here.reduce((sum, r) => sum + r.admitted, 0),
      peakWaiting: idle + here.reduce((sum, r) => sum + r.peak_waiting, 0),
      waiting: [...depth.values()].reduce((sum, n) => sum + n, 0),
    };
  });
}

/** Hourly trends of one site (or all) and one tenant (or all, for staff), the hours from `fromMs` to `toMs`. */
export function trendsOf(db: Database, query: { siteId: string | null; tenantId: string | null; fromMs: number; toMs: number }): TrendsView {
  // Read first: the buckets are at least this recent, so `minSeq=seq` never waits on a model behind them.
  const seq = readCheckpoint(db).seq;
  // Whole hours: from the top of `fromMs`'s hour to the end of the hour `toMs` falls in (the current one included).
  const fromMs = Math.floor(query.fromMs / msPerHour) * msPerHour;
  const toMs = Math.ceil(query.toMs / msPerHour) * msPerHour;
  const hours = hoursBetween(fromMs, toMs);
  const [from, to] = [new Date(fromMs).toISOString(), new Date(toMs).toISOString()];
  const args: Scope = { siteId: query.siteId, tenantId: query.tenantId, from, to };
  const operations = db
    .prepare(
      `SELECT hour, operation, sum(started) AS started, sum(completed) AS completed, sum(failed) AS failed, sum(cancelled) AS cancelled
       FROM trend_operations WHERE ${siteFilter} AND hour >= @from AND hour < @to GROUP BY hour, operation ORDER BY hour, operation`,
    )
    .all(args) as OperationTrend[];
  const failures = db
    .prepare(
      `SELECT hour, code, sum(workflows) AS workflows, sum(steps) AS steps
       FROM trend_failures WHERE ${siteFilter} AND hour >= @from AND hour < @to GROUP BY hour, code ORDER BY hour, code`,
    )
    .all(args) as FailureTrend[];
  return {
    siteId: query.siteId,
    tenantId: query.tenantId,
    from,
    to,
    hours,
    operations,
    failures,
    capacity: capacityTrends(db, args, hours),
    ...stepTrends(db, args),
    durationRelativeError,
    seq,
  };
}
