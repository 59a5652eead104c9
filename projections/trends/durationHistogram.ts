/**
 * Step durations per hour bucket, kept as a fixed log-scale histogram rather than the durations themselves: a bucket
 * stays a few dozen integer counts however many steps ran, two buckets (hours, sites) add up bin by bin, and the
 * percentile of any sum of buckets is read off the summed counts. Percentiles of hours cannot be averaged into the
 * percentile of a day; histograms can be added. Fixed bins (not a sketch that adapts to its data) also make the rows a
 * pure function of the events, so a rebuild writes exactly what live projection wrote.
 *
 * Bin 0 holds durations below 1 ms (0: the log's times are whole milliseconds); bin k ≥ 1 holds [r^(k-1), r^k) ms with
 * r = 2^(1/8), 8 bins per doubling (1 ms to a day is ~213 bins). A percentile is the geometric middle of the bin that
 * holds the rank it asks for, so it is within r^(1/2) - 1 ≈ 4.4% of the exact value (exact for bin 0).
 */
const binsPerDoubling = 8;

/** The largest relative error of an estimated percentile against the exact one (nearest rank) of the same durations. */
export const durationRelativeError = 2 ** (1 / (2 * binsPerDoubling)) - 1;

const lowerBound = (bin: number): number => (bin <= 0 ? 0 : 2 ** ((bin - 1) / binsPerDoubling));

/** The bin a duration (ms, ≥ 0) falls in; checked against the bounds, so float rounding at an edge cannot misplace it. */
export function binOf(durationMs: number): number {
  if (!(durationMs >= 1)) return 0;
  let bin = 1 + Math.floor(Math.log2(durationMs) * binsPerDoubling);
  while (bin > 1 && lowerBound(bin) > durationMs) bin -= 1;
  while (lowerBound(bin + 1) <= durationMs) bin += 1;
  return bin;
}

/** What a bin stands for: the geometric middle of its bounds (0 for bin 0). */
export const valueOfBin = (bin: number): number => (bin <= 0 ? 0 : 2 ** ((bin - 0.5) / binsPerDoubling));

/** The nearest rank (1-based) of percentile `p` (0 < p ≤ 1) among `n` values: the exact and the estimate agree on it. */
export const rankOf = (p: number, n: number): number => Math.min(n, Math.max(1, Math.ceil(p * n)));

/** The exact percentile (nearest rank) of durations, for comparison with the estimate. */
export function exactPercentile(durations: readonly number[], p: number): number {
  const sorted = [...durations].sort((a, b) => a - b);
  return sorted[rankOf(p, sorted.length) - 1] ?? 0;
}

/** The estimated percentile `p` of a histogram (bin → count); 0 for an empty one. */
export function percentileOf(bins: ReadonlyMap<number, number>, p: number): number {
  const ordered = [...bins.entries()].filter(([, n]) => n > 0).sort(([a], [b]) => a - b);
  const total = ordered.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return 0;
  const rank = rankOf(p, total);
  let seen = 0;
  for (const [bin, n] of ordered) {
    seen += n;
    if (seen >= rank) return valueOfBin(bin);
  }
  return valueOfBin(ordered.at(-1)![0]);
}
