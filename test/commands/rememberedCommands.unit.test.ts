import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RememberedCommands, type AppliedCommand } from '../../services/platform/commands/rememberedCommands.ts';

const applied = (seq: number): AppliedCommand => ({ seq, events: [], commandName: 'site.create', requestDigest: undefined });

/** Adds ids `c<from>`…`c<to - 1>`, each answered at its own number as sequence. */
function adding(base: RememberedCommands, from: number, to: number): RememberedCommands {
  let commands = base;
  for (let i = from; i < to; i++) commands = commands.with(`c${i}`, applied(i));
  return commands;
}

describe('RememberedCommands', () => {
  it('remembers at least the latest 128 command ids, and forgets ids older than the latest 143', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 600 }), (count) => {
        const commands = adding(RememberedCommands.none, 0, count);
        for (let i = Math.max(0, count - 128); i < count; i++) expect(commands.get(`c${i}`)?.seq).toBe(i);
        for (let i = 0; i < count - 143; i++) expect(commands.get(`c${i}`)).toBeUndefined();
      }),
      { numRuns: 60 },
    );
  });

  it('is persistent: what a snapshot remembers does not change when a later one adds to it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 300 }), (before, after) => {
        const older = adding(RememberedCommands.none, 0, before);
        const newer = adding(older, before, before + after);
        expect(older.get(`c${before}`)).toBeUndefined();
        for (let i = Math.max(0, before - 128); i < before; i++) expect(older.get(`c${i}`)?.seq).toBe(i);
        expect(newer.get(`c${before + after - 1}`)?.seq).toBe(before + after - 1);
      }),
      { numRuns: 60 },
    );
  });

  it('answers the latest result of an id added twice', () => {
    const commands = adding(RememberedCommands.none, 0, 20).with('c3', applied(99));
    expect(commands.get('c3')?.seq).toBe(99);
  });

  it('rebuilt from the oldest id it keeps once one more is added, remembers exactly what it does (a carried state)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 }), fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 400 }), (count, gaps) => {
        // Sequences with gaps between them, as other subjects' messages and skipped ones leave on a subject.
        const seqs: number[] = [];
        for (let i = 0, seq = 0; i < count; i++) seqs.push((seq += gaps[i % Math.max(1, gaps.length)] ?? 1));
        let incremental = RememberedCommands.none;
        for (let i = 0; i < count; i++) {
          const from = incremental.oldestKeptWithOneMore() ?? seqs[i]!;
          incremental = incremental.with(`c${i}`, applied(seqs[i]!));
          // Every few (and near the generations' edges): what a reader rebuilds from the messages at `from` through this one.
          if (i % 5 !== 0 && i % 16 !== 15 && i !== count - 1) continue;
          let rebuilt = RememberedCommands.none;
          for (let j = 0; j <= i; j++) if (seqs[j]! >= from) rebuilt = rebuilt.with(`c${j}`, applied(seqs[j]!));
          for (let j = 0; j <= i; j++) expect(rebuilt.get(`c${j}`), `c${j} after ${i}`).toEqual(incremental.get(`c${j}`));
          expect(rebuilt).toEqual(incremental);
        }
      }),
      { numRuns: 15 },
    );
  });
});
