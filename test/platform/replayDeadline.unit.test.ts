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
});
