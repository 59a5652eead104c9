import { describe, expect, it } from 'vitest';
import type { NodeLogEntry } from '../../schemas/agent/nodeLog.ts';
import { appendLines, atEnd } from '../../services/console/app/src/nodes/nodeLogLines.ts';

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
});
