import type { TrendsView } from '../api/shapes.ts';

/** One chart: its series over the range's hours (null: nothing to say that hour), and how its numbers read. */
export interface ChartSpec {
  readonly key: string;
  readonly title: string;
  readonly description: string;
  /** What the chart shows, in words: the label of its image. */
  readonly summary: string;
  readonly hours: readonly string[];
  readonly series: readonly { readonly label: string; readonly values: (number | null)[] }[];
  readonly format: (value: number) => string;
  /** Counts: the axis ticks at whole numbers. */
  readonly integer: boolean;
}

/** `2026-12-06 22:00` (UTC) of an epoch second. */
export const hourLabel = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString().slice(0, 16).replace('T', ' ');

const count = (n: number) => String(Math.round(n));
const sum = (values: readonly (number | null)[]) => values.reduce<number>((a, v) => a + (v ?? 0), 0);

/** Milliseconds as a person reads a step's duration. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** Bytes per second, in MB/s (10^6, as disks are sold). */
export const formatRate = (bytesPerSecond: number): string => `${(bytesPerSecond / 1e6).toFixed(bytesPerSecond < 1e7 ? 2 : 0)} MB/s`;

/** A value per hour of the range, from rows that name their hour. */
function perHour<T extends { hour: string }>(
  view: TrendsView,
  rows: readonly T[],
  value: (row: T) => number | null,
  empty: number | null = 0,
): (number | null)[] {
  const byHour = new Map(rows.map((r) => [r.hour, value(r)]));
  return view.hours.map((h) => byHour.get(h) ?? empty);
}

function operations(view: TrendsView): ChartSpec {
  const series = (['deploy', 'release'] as const).flatMap((operation) => {
    const rows = view.operations.filter((o) => o.operation === operation);
    const name = operation === 'deploy' ? 'Deploys' : 'Releases';
    return [
      { label: `${name} started`, values: perHour(view, rows, (r) => r.started) },
      { label: `${name} completed`, values: perHour(view, rows, (r) => r.completed) },
      { label: `${name} failed`, values: perHour(view, rows, (r) => r.failed) },
    ];
  });
  return {
    key: 'operations',
    title: 'Deploys and releases per hour',
    description: 'Workflows started, and those that ended, in the hour they ended.',
    summary: series.map((s) => `${s.label.toLowerCase()} ${sum(s.values)}`).join(', '),
    hours: view.hours,
    series,
    format: count,
    integer: true,
  };
}

function failures(view: TrendsView): ChartSpec {
  const codes = [...new Set(view.failures.map((f) => f.code))].sort();
  const series = codes.map((code) => ({
    label: code,
    values: perHour(
      view,
      view.failures.filter((f) => f.code === code),
      (r) => r.steps,
    ),
  }));
  return {
    key: 'failures',
    title: 'Failures by code',
    description: 'Step attempts that failed per hour, retried ones too, by error code.',
    summary: series.length ? series.map((s) => `${s.label} ${sum(s.values)}`).join(', ') : 'no failures',
    hours: view.hours,
    series,
    format: count,
    integer: true,
  };
}

function durations(view: TrendsView): ChartSpec {
  const steps = view.stepTotals.map((s) => s.stepId);
  const series = steps.map((stepId) => ({
    label: `${stepId} p95`,
    values: perHour(
      view,
      view.steps.filter((s) => s.stepId === stepId),
      (r) => r.p95Ms,
      null,
    ),
  }));
  return {
    key: 'durations',
    title: 'Step duration p95 by step type',
    description: `Slowest 5% of each step type's succeeded attempts per hour (estimates within ${(view.durationRelativeError * 100).toFixed(1)}%); p50 and p95 over the range are in the table below the charts.`,
    summary: view.stepTotals.length ? view.stepTotals.map((s) => `${s.stepId} p95 ${formatDuration(s.p95Ms)}`).join(', ') : 'no steps succeeded',
    hours: view.hours,
    series,
    format: formatDuration,
    integer: false,
  };
}

function capacity(view: TrendsView): ChartSpec {
  const series = [
    { label: 'Waiting, deepest', values: perHour(view, view.capacity, (r) => r.peakWaiting) },
    { label: 'Waiting at the hour’s end', values: perHour(view, view.capacity, (r) => r.waiting) },
    { label: 'Asked for', values: perHour(view, view.capacity, (r) => r.requested) },
  ];
  return {
    key: 'capacity',
    title: 'Waiting for capacity',
    description: 'Deploys, releases and retirements held back by a site’s cap: the queue’s depth, and how many joined it.',
    summary: `deepest ${Math.max(0, ...series[0]!.values.map((v) => v ?? 0))}, now ${view.capacity.at(-1)?.waiting ?? 0}, asked for ${sum(series[2]!.values)}`,
    hours: view.hours,
    series,
    format: count,
    integer: true,
  };
}

function throughput(view: TrendsView): ChartSpec {
  const moving = view.stepTotals.filter((s) => s.bytesPerSecond !== null);
  const series = moving.map((total) => ({
    label: total.stepId,
    values: perHour(
      view,
      view.steps.filter((s) => s.stepId === total.stepId),
      (r) => r.bytesPerSecond,
      null,
    ),
  }));
  return {
    key: 'throughput',
    title: 'Wipe and image-write throughput',
    description: 'Bytes the signed results report, over the steps’ durations.',
    summary: moving.length ? moving.map((s) => `${s.stepId} ${formatRate(s.bytesPerSecond ?? 0)}`).join(', ') : 'no wipes or image writes',
    hours: view.hours,
    series,
    format: formatRate,
    integer: false,
  };
}

/** The page's charts, in reading order. */
export const chartsOf = (view: TrendsView): ChartSpec[] => [operations(view), failures(view), capacity(view), durations(view), throughput(view)];
