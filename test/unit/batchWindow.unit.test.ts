import { describe, expect, it } from 'vitest';
import { BatchWindow, BUSY_WINDOW_MS, QUIET_WINDOW_MS } from '../../services/projectors/batchWindow.ts';

describe('projector batch window', () => {
  const clock = () => {
    let nowMs = 1_000;
    return { now: () => nowMs, advance: (ms: number) => (nowMs += ms) };
  };

  it('a first message after a quiet spell waits the short window; one arriving while batches keep flushing waits the long one', () => {
    const time = clock();
    const window = new BatchWindow(time.now);
    expect(window.forFirstMessage()).toBe(QUIET_WINDOW_MS);
    time.advance(QUIET_WINDOW_MS);
    window.flushed();
    time.advance(3);
    expect(window.forFirstMessage()).toBe(BUSY_WINDOW_MS);
    time.advance(BUSY_WINDOW_MS);
    window.flushed();
    time.advance(BUSY_WINDOW_MS - 1);
    expect(window.forFirstMessage()).toBe(BUSY_WINDOW_MS);
  });

  it('the log goes quiet again once no message came for a whole long window', () => {
    const time = clock();
    const window = new BatchWindow(time.now);
    window.flushed();
    time.advance(BUSY_WINDOW_MS);
    expect(window.forFirstMessage()).toBe(QUIET_WINDOW_MS);
  });
});
