import { cpuMeter } from './cpuMeter.ts';

/** What a measurement reports: a count done in some seconds, and the target it is judged against. */
export type Target =
  /** At least `value` events (or requests) per second. */
  | { kind: 'minRate'; value: number }
  /** At least `value` × the raw publish rate measured in the same run. */
  | { kind: 'minRatio'; value: number }
  /** At most `seconds` for `perCount` events; scaled linearly when fewer were measured. */
  | { kind: 'maxSeconds'; seconds: number; perCount: number }
  | { kind: 'none' };

export interface Figure {
  key: string;
  label: string;
  /** Events, messages or requests measured (warm-up excluded). */
  count: number;
  seconds: number;
  /** count / seconds. */
  rate: number;
  unit: string;
  target: Target;
  /** CPU seconds per process during the measured interval (bench, nats, api). */
  cpu: Record<string, number>;
  detail?: Record<string, unknown>;
}

export interface Timing {
  seconds: number;
  cpu: Record<string, number>;
}

export function figure(fields: Omit<Figure, 'rate' | 'seconds' | 'cpu'> & { timing: Timing }): Figure {
  const { timing, ...rest } = fields;
  return { ...rest, seconds: timing.seconds, cpu: timing.cpu, rate: fields.count / timing.seconds };
}

/** A monotonic stopwatch in seconds. */
export function stopwatch(): () => number {
  const started = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - started) / 1e9;
}

/** Wall time plus the CPU time of this process and the metered ones (see `meterProcess`). */
export function startTiming(): () => Timing {
  const elapsed = stopwatch();
  const cpu = cpuMeter();
  return () => ({ seconds: elapsed(), cpu: cpu() });
}

/** The median-rate figure of repeated rounds, with every round's rate kept in `detail.roundRates`. */
export function medianOf(rounds: Figure[]): Figure {
  const sorted = [...rounds].sort((a, b) => a.rate - b.rate);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const label = rounds.length > 1 ? `${median.label}, median of ${rounds.length}` : median.label;
  return { ...median, label, detail: { ...median.detail, roundRates: rounds.map((r) => Math.round(r.rate)) } };
}
