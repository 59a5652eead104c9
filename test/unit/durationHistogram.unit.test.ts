import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { binOf, durationRelativeError, exactPercentile, percentileOf, valueOfBin } from '../../projections/trends/durationHistogram.ts';

const histogramOf = (durations: readonly number[]) => {
  const bins = new Map<number, number>();
  for (const d of durations) bins.set(binOf(d), (bins.get(binOf(d)) ?? 0) + 1);
  return bins;
};

const withinError = (estimate: number, exact: number) => Math.abs(estimate - exact) <= durationRelativeError * exact * (1 + 1e-12);

// Whole milliseconds up to two days (the log's times), skewed to short steps as well as long ones.
const durationArb = fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 172_800_000 }));

describe('step duration histogram', () => {
  it('states an error below 5%', () => {
    expect(durationRelativeError).toBeGreaterThan(0.04);
    expect(durationRelativeError).toBeLessThan(0.05);
  });

  test.prop([durationArb])('a duration stands for a value within the stated error of it', (duration) => {
    expect(withinError(valueOfBin(binOf(duration)), duration)).toBe(true);
  });

  test.prop([fc.array(durationArb, { minLength: 1, maxLength: 300 }), fc.constantFrom(0.5, 0.95)])(
    'bucketed p50 and p95 are within the stated error of the exact percentile',
    (durations, p) => {
      expect(withinError(percentileOf(histogramOf(durations), p), exactPercentile(durations, p))).toBe(true);
    },
  );

  test.prop([
    fc.array(durationArb, { minLength: 1, maxLength: 100 }),
    fc.array(durationArb, { minLength: 1, maxLength: 100 }),
    fc.double({ min: 0.01, max: 1, noNaN: true }),
  ])('two hours added bin by bin give the percentile of all their durations, within the stated error', (hourA, hourB, p) => {
    const added = histogramOf(hourA);
    for (const [bin, n] of histogramOf(hourB)) added.set(bin, (added.get(bin) ?? 0) + n);
    expect(withinError(percentileOf(added, p), exactPercentile([...hourA, ...hourB], p))).toBe(true);
  });

  it('edges of bins land where their bounds say, and an empty histogram reads 0', () => {
    expect(binOf(0)).toBe(0);
    expect(binOf(1)).toBe(1);
    expect(binOf(2)).toBe(9);
    expect(binOf(1024)).toBe(81);
    expect(binOf(1023)).toBe(80);
    expect(percentileOf(new Map(), 0.5)).toBe(0);
    expect(percentileOf(histogramOf([0, 0, 0]), 0.95)).toBe(0);
  });
});
