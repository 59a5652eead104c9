import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { budgetAggregate } from '../../services/autonomy/controls/controls.ts';
import { takeBudgetAt } from './budgetRun.ts';

const START = Date.parse('2026-12-02T00:00:00.000Z');

/**
 * Attempts to take a scope's budget at increasing times (gaps of 0 to 2 windows, in hundredths of one, so attempts
 * pile up inside a window and straddle every boundary), replayed through `autonomy.consumeBudget` and `evolve`.
 */
const runArb = fc.record({
  windowMs: fc.integer({ min: 1_000, max: 7_200_000 }),
  limit: fc.integer({ min: 0, max: 6 }),
  gaps: fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 60 }),
});

test.prop([runArb], { numRuns: 300 })(
  'budget: no window of the budget’s length ever holds more than the budget, and an attempt is refused only when one already holds it all (issue 31, item 12)',
  ({ windowMs, limit, gaps }) => {
    let state = budgetAggregate.initialState;
    let nowMs = START;
    const admitted: number[] = [];
    gaps.forEach((gap, i) => {
      nowMs += Math.floor((gap * windowMs) / 100);
      const inWindowBefore = admitted.filter((t) => t > nowMs - windowMs).length;
      const outcome = takeBudgetAt(state, { scope: 'metal', windowMs, limit, decisionId: decisionIdOf('retry', `n${i}`), episode: 1 }, nowMs);
      if (outcome === 'refused') {
        expect(inWindowBefore).toBe(limit);
        return;
      }
      expect(outcome).not.toBe('repeat');
      expect(inWindowBefore).toBeLessThan(limit);
      admitted.push(nowMs);
      state = budgetAggregate.evolve(state, outcome as Exclude<typeof outcome, 'refused' | 'repeat'>);
    });
    // The fullest window of length `windowMs` ends at an admitted use: check every one.
    for (const end of admitted) expect(admitted.filter((t) => t > end - windowMs && t <= end).length).toBeLessThanOrEqual(limit);
  },
);
