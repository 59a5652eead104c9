import { PlatformError } from '../../../schemas/platformError.ts';

/**
 * How long a catch-up read of the log may wait for its next message. An ordered consumer that loses its server
 * (a cluster node killed, a leader moving) is meant to recreate itself; when it does not, the `for await` over it
 * waits forever, and a leader that starts by replaying holds its lease while doing nothing at all.
 */
export const REPLAY_IDLE_MS = 15_000;

/**
 * The messages of `source` as they come, failing as `UNAVAILABLE` once none has arrived for `idleMs`: the
 * caller's start fails, and whoever supervises it (the lease, the projector's restart) tries again on a fresh
 * consumer. One timer watches the whole read, re-armed for what is left of the current wait when it fires early: a
 * timer and a race per message were a twentieth of a rebuild's CPU (issue 34).
 */
export async function* withinReplayDeadline<T>(source: AsyncIterable<T>, what: string, idleMs = REPLAY_IDLE_MS): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let waiting = false;
  let waitStarted = 0;
  let stall: ((err: Error) => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const watch = (delayMs: number) => {
    timer = setTimeout(() => {
      const idle = performance.now() - waitStarted;
      if (waiting && idle >= idleMs) stall?.(new PlatformError('UNAVAILABLE', `${what}: no message from the log for ${idleMs} ms`));
      else watch(waiting ? idleMs - idle : idleMs);
    }, delayMs);
  };
  try {
    watch(idleMs);
    for (;;) {
      waitStarted = performance.now();
      waiting = true;
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        stall = reject;
        iterator.next().then(resolve, reject);
      });
      waiting = false;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    clearTimeout(timer);
    // The source learns the reader is gone, as a plain `for await` would tell it (a nats.js consumer stops
    // only then); when it is stuck on a next() it is not waited for.
    const returned = iterator.return?.();
    if (!waiting) await returned;
  }
}
