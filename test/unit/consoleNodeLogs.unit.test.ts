import { describe, expect, it } from 'vitest';
import type { NodeLogEntry } from '../../schemas/agent/nodeLog.ts';
import { appendLines, atEnd, readerScrolledAway } from '../../services/console/app/src/nodes/nodeLogLines.ts';

const line = (seq: number): NodeLogEntry => ({
  seq,
  nodeId: 'n1',
  source: 'ramdisk',
  stream: 'stdout',
  at: '2026-01-01T00:00:00.000Z',
  storedAt: '2026-01-01T00:00:00.000Z',
  text: `line ${seq}`,
});

describe('console node log panel', () => {
  it('appends new lines once each (a resumed stream repeats none) and keeps only the newest', () => {
    const held = appendLines([], [line(1), line(2)]);
    expect(appendLines(held, [line(2), line(3)]).map((l) => l.seq)).toEqual([1, 2, 3]);
    expect(appendLines([line(1), line(2), line(3)], [line(4), line(5)], 3).map((l) => l.seq)).toEqual([3, 4, 5]);
  });

  it('follows new lines only while the reader is at the end of the box', () => {
    expect(atEnd({ scrollHeight: 1000, clientHeight: 300, scrollTop: 700 })).toBe(true);
    expect(atEnd({ scrollHeight: 1000, clientHeight: 300, scrollTop: 695.5 })).toBe(true);
    // Scrolled up by more than a few pixels: the panel stops pulling the view down.
    expect(atEnd({ scrollHeight: 1000, clientHeight: 300, scrollTop: 600 })).toBe(false);
  });

  it('hears of a reader’s scroll up before its scroll event, so new lines do not pull the view back down', () => {
    // Pinned at 700 (the end), the reader went to the top and a line arrived before the scroll event.
    expect(readerScrolledAway({ scrollHeight: 1020, clientHeight: 300, scrollTop: 0 }, 700)).toBe(true);
    // Pinned at 700, a line arrived: still where the panel put it.
    expect(readerScrolledAway({ scrollHeight: 1020, clientHeight: 300, scrollTop: 700 }, 700)).toBe(false);
    // The box grew taller and its position was clamped down to the new end: still at the end.
    expect(readerScrolledAway({ scrollHeight: 1000, clientHeight: 600, scrollTop: 400 }, 700)).toBe(false);
  });
});
