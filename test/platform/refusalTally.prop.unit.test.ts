import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { COUNTED_SOURCES_MAX, RefusalCount } from '../../schemas/refusals.ts';
import { RefusalTally } from '../../services/platform/refusalTally.ts';

const WINDOW_MS = 1_000;
const RECORDS = 3;
const SOURCES = 30;

/** A request: from which source, when (ms, increasing), refused with which reason or passed. */
const requestArb = fc.record({
  source: fc.integer({ min: 0, max: 60 }).map((i) => `s${i}`),
  gapMs: fc.integer({ min: 0, max: 400 }),
  reason: fc.option(fc.constantFrom('JOIN_TOKEN_UNKNOWN', 'JOIN_TOKEN_INVALID', 'AGENT_IDENTITY_MISMATCH'), { nil: undefined }),
});

describe('RefusalTally', () => {
  test.prop([fc.array(requestArb, { maxLength: 400 }), fc.integer({ min: 1, max: 50 })])(
    'records at most one refusal per source and a bounded number per window, and counts every other refusal exactly once',
    (requests, takeEvery) => {
      const tally = new RefusalTally({ windowMs: WINDOW_MS, recordsPerWindow: RECORDS, sourcesPerWindow: SOURCES });
      let now = 0;
      let refused = 0;
      const recorded: { source: string; atMs: number }[] = [];
      const counts: RefusalCount[] = [];
      requests.forEach(({ source, gapMs, reason }, i) => {
        now += gapMs;
        const ticket = tally.admit(source, now);
        if (reason === undefined) ticket.passed();
        else {
          refused += 1;
          ticket.refused(reason);
          if (ticket.record) recorded.push({ source, atMs: now });
        }
        if (i % takeEvery === 0) {
          const count = tally.take(now);
          if (count) counts.push(count);
        }
      });
      const last = tally.take(now, { final: true });
      if (last) counts.push(last);

      // Conservation: recorded + counted = refused.
      expect(recorded.length + counts.reduce((a, c) => a + c.refused, 0)).toBe(refused);
      for (const count of counts) {
        expect(RefusalCount.safeParse(count).success).toBe(true);
        expect(count.sources.length).toBeLessThanOrEqual(COUNTED_SOURCES_MAX);
        expect(count.sources.reduce((a, s) => a + s.refused, 0) + count.otherSources).toBe(count.refused);
      }
      // Records per window are bounded, and a source records at most once per window: any span shorter than a
      // window meets at most two windows.
      for (const r of recorded) {
        const span = recorded.filter((o) => o.atMs >= r.atMs && o.atMs < r.atMs + WINDOW_MS);
        expect(span.length).toBeLessThanOrEqual(2 * RECORDS);
        expect(span.filter((o) => o.source === r.source).length).toBeLessThanOrEqual(2);
      }
    },
  );

  it('grows the record count with time, not with the rate: 10,000 refusals in one window leave 3 records and one count', () => {
    const tally = new RefusalTally({ windowMs: WINDOW_MS, recordsPerWindow: RECORDS, sourcesPerWindow: SOURCES });
    let records = 0;
    for (let i = 0; i < 10_000; i++) {
      const ticket = tally.admit(`s${i % 100}`, i / 100);
      ticket.refused('JOIN_TOKEN_UNKNOWN');
      if (ticket.record) records += 1;
    }
    expect(records).toBe(RECORDS);
    const count = tally.take(WINDOW_MS);
    expect(count).toMatchObject({ refused: 10_000 - RECORDS, from: new Date(0).toISOString() });
    expect(count!.sources).toHaveLength(COUNTED_SOURCES_MAX);
    // 30 sources counted apart; the 70 others only summed.
    expect(count!.otherSources).toBeGreaterThan(0);
    expect(tally.take(WINDOW_MS * 2)).toBeUndefined();
  });

  it('counts a source under a name a count can hold: cut to 200 characters, never empty', () => {
    const tally = new RefusalTally({ windowMs: WINDOW_MS, recordsPerWindow: 0 });
    tally.admit('x'.repeat(5_000), 0).refused('MALFORMED');
    tally.admit('', 0).refused('MALFORMED');
    const count = tally.take(0, { final: true })!;
    expect(RefusalCount.parse(count).sources.map((s) => s.source)).toEqual(['unnamed', 'x'.repeat(200)]);
  });

  it('gives a record back when the request was not refused, and grants one source one record per window', () => {
    const tally = new RefusalTally({ windowMs: WINDOW_MS, recordsPerWindow: 1 });
    const first = tally.admit('a', 0);
    const concurrent = tally.admit('a', 1);
    expect([first.record, concurrent.record]).toEqual([true, false]);
    first.passed();
    expect(tally.admit('b', 2).record).toBe(true);
    expect(tally.admit('a', WINDOW_MS + 5).record).toBe(true);
  });
});
