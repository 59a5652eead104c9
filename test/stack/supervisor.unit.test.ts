import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../services/platform/logger.ts';
import { RestartBackoff } from '../../services/platform/restartBackoff.ts';
import { Supervisor } from '../../services/stack/supervisor.ts';

/** A stand-in `serve` child: exits when the test says so (or when killed). */
class FakeChild extends EventEmitter {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  exit(code: number): void {
    this.exitCode = code;
    this.emit('exit', code, null);
  }
  kill(signal: NodeJS.Signals): boolean {
    this.signalCode = signal;
    this.emit('exit', null, signal);
    return true;
  }
}

describe('RestartBackoff', () => {
  it('doubles while the process keeps crashing, up to the maximum', () => {
    const backoff = new RestartBackoff({ initialMs: 1_000, maxMs: 15_000, stableAfterMs: 30_000 });
    expect([0, 10, 10, 10, 10, 10].map((ran) => backoff.delayAfter(ran))).toEqual([1_000, 2_000, 4_000, 8_000, 15_000, 15_000]);
  });

  it('starts over after a stable run', () => {
    const backoff = new RestartBackoff({ initialMs: 1_000, maxMs: 15_000, stableAfterMs: 30_000 });
    for (let i = 0; i < 6; i++) backoff.delayAfter(0);
    expect(backoff.delayAfter(30_000)).toBe(1_000);
    expect(backoff.delayAfter(0)).toBe(2_000);
  });
});

describe('Supervisor', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('restarts a crash-looping child ever more slowly and promptly again after it ran stably', async () => {
    const children: FakeChild[] = [];
    const supervisor = new Supervisor({}, createLogger('test', 'silent'), {
      backoff: { initialMs: 1_000, maxMs: 15_000, stableAfterMs: 30_000 },
      spawn: () => {
        const child = new FakeChild();
        children.push(child);
        return child as unknown as ChildProcess;
      },
    });
    supervisor.run(['api']);
    expect(children).toHaveLength(1);

    // Crash at once, five times: restarts come after 1, 2, 4, 8 and 15 s.
    for (const delay of [1_000, 2_000, 4_000, 8_000, 15_000]) {
      const before = children.length;
      children.at(-1)!.exit(1);
      await vi.advanceTimersByTimeAsync(delay - 1);
      expect(children).toHaveLength(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(children).toHaveLength(before + 1);
    }

    // A run of a minute is stable: the next crash is restarted after 1 s, not 15 s.
    await vi.advanceTimersByTimeAsync(60_000);
    const before = children.length;
    children.at(-1)!.exit(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(children).toHaveLength(before + 1);

    await supervisor.stop();
    expect(children.at(-1)!.signalCode).toBe('SIGTERM');
    children.at(-1)!.exit(0);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(children).toHaveLength(before + 1);
  });
});
