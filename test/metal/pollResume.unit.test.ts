import { describe, expect, it } from 'vitest';
import { settledPolls } from '../../services/agents/agentGateway.ts';

/** A stored-results oracle for requests 1..k, counting the lookups. */
const storedUpTo = (k: number) => {
  const asked: number[] = [];
  return { asked, isStored: async (n: number) => (asked.push(n), n <= k) };
};

describe('regression: httpViaSite polling resumes after a stepNotReady rerun', () => {
  it('settledPolls finds how many polled requests of the attempt settled, in logarithmic lookups', async () => {
    for (const k of [0, 1, 2, 3, 7, 8, 9, 100, 1_000]) {
      const oracle = storedUpTo(k);
      expect(await settledPolls(oracle.isStored)).toBe(k);
      expect(oracle.asked.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(k + 2)) + 2);
    }
  });
});
