import { QueuedIteratorImpl } from '@nats-io/nats-core/internal';
import { describe, expect, it } from 'vitest';
import { PlatformError } from '../../schemas/platformError.ts';
import { withinReplayDeadline } from '../../services/platform/nats/replayDeadline.ts';

/** Yields `values`, then either ends or never says another word (a consumer whose server went away). */
async function* messages(values: number[], then: 'end' | 'silence'): AsyncGenerator<number> {
  yield* values;
  if (then === 'silence') await new Promise(() => undefined);
}

describe('a catch-up read of the log under a deadline', () => {
  it('passes every message through and ends with its source', async () => {
    const seen: number[] = [];
    for await (const m of withinReplayDeadline(messages([1, 2, 3], 'end'), 'test replay', 1_000)) seen.push(m);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('fails as UNAVAILABLE once the source goes silent, after what it delivered', async () => {
    const seen: number[] = [];
    const read = (async () => {
      for await (const m of withinReplayDeadline(messages([1, 2], 'silence'), 'test replay', 50)) seen.push(m);
    })();
    const err = await read.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as PlatformError).code).toBe('UNAVAILABLE');
    expect((err as PlatformError).message).toContain('test replay');
    expect(seen).toEqual([1, 2]);
  });

  it('lets a slow but steady source finish: the deadline is per message, not for the whole read', async () => {
    async function* steady() {
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 20));
        yield i;
      }
    }
    const seen: number[] = [];
    for await (const m of withinReplayDeadline(steady(), 'test replay', 60)) seen.push(m);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  describe('over a source it can stop (a nats.js consumer: a QueuedIterator)', () => {
    /** Pushes `values` now; then ends the source (`end`) or never says another word (`silence`). */
    function queued(values: number[], then: 'end' | 'silence') {
      const source = new QueuedIteratorImpl<number>();
      for (const v of values) source.push(v);
      if (then === 'end') source.push(() => source.stop());
      return source;
    }

    it('reads the source itself: the iterator handed out is not a generator wrapping it', () => {
      const iterator = withinReplayDeadline(queued([1], 'end'), 'test replay', 1_000)[Symbol.asyncIterator]();
      expect(Object.prototype.toString.call(iterator)).not.toBe('[object AsyncGenerator]');
    });

    it('passes every message through and ends with its source', async () => {
      const seen: number[] = [];
      for await (const m of withinReplayDeadline(queued([1, 2, 3], 'end'), 'test replay', 1_000)) seen.push(m);
      expect(seen).toEqual([1, 2, 3]);
    });

    it('stops a silent source with UNAVAILABLE, after what it delivered', async () => {
      const source = queued([1, 2], 'silence');
      const seen: number[] = [];
      const err = await (async () => {
        for await (const m of withinReplayDeadline(source, 'test replay', 50)) seen.push(m);
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(PlatformError);
      expect((err as PlatformError).code).toBe('UNAVAILABLE');
      expect((err as PlatformError).message).toContain('test replay');
      expect(seen).toEqual([1, 2]);
      expect(source.done).toBe(true);
    });

    it('lets a slow but steady source finish, and a reader that is busy is not waiting', async () => {
      const source = new QueuedIteratorImpl<number>();
      void (async () => {
        for (let i = 0; i < 5; i++) {
          await new Promise((r) => setTimeout(r, 20));
          source.push(i);
        }
        source.push(() => source.stop());
      })();
      const seen: number[] = [];
      for await (const m of withinReplayDeadline(source, 'test replay', 60)) {
        seen.push(m);
        // Longer than the deadline, but spent by the reader, not waiting on the log.
        if (m === 2) await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen).toEqual([0, 1, 2, 3, 4]);
    });

    it('tells the source when the reader leaves early', async () => {
      const source = queued([1, 2, 3], 'silence');
      for await (const m of withinReplayDeadline(source, 'test replay', 1_000)) if (m === 2) break;
      expect(source.done).toBe(true);
    });
  });
});
