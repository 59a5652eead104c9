import { describe, expect, it } from 'vitest';
import { referenceMicrosPerItem, ReferenceSampler, summariseReferenceWork } from '../../scripts/bench/referenceWork.ts';

describe('the benches’ reference work (how fast the machine ran)', () => {
  it('summarises samples as their median, fastest and slowest, to a tenth', () => {
    expect(summariseReferenceWork([91.04, 120.3, 88.66])).toEqual({ microsPerItem: { median: 91, min: 88.7, max: 120.3 }, samples: 3 });
    expect(summariseReferenceWork([100, 80, 90, 130])).toEqual({ microsPerItem: { median: 95, min: 80, max: 130 }, samples: 4 });
    expect(() => summariseReferenceWork([])).toThrow('no reference work samples');
  });

  it('times the work when the sampler starts and stops, and in between when given an interval', async () => {
    expect(referenceMicrosPerItem(50)).toBeGreaterThan(0);
    expect(new ReferenceSampler().stop().samples).toBe(2);
    const sampler = new ReferenceSampler(20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { samples, microsPerItem } = sampler.stop();
    expect(samples).toBeGreaterThan(2);
    expect(microsPerItem.min).toBeLessThanOrEqual(microsPerItem.median);
    expect(microsPerItem.median).toBeLessThanOrEqual(microsPerItem.max);
  });
});
