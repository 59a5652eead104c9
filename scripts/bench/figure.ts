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
  detail?: Record<string, unknown>;
}

export function figure(fields: Omit<Figure, 'rate'>): Figure {
  return { ...fields, rate: fields.count / fields.seconds };
}

/** A monotonic stopwatch in seconds. */
export function stopwatch(): () => number {
  const started = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - started) / 1e9;
}
