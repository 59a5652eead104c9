import { PlatformError } from '../../../schemas/platformError.ts';

/**
 * How long a catch-up read of the log may wait for its next message. An ordered consumer that loses its server
 * (a cluster node killed, a leader moving) is meant to recreate itself; when it does not, the `for await` over it
 * waits forever, and a leader that starts by replaying holds its lease while doing nothing at all.
 */
export const REPLAY_IDLE_MS = 15_000;

/** A source its reader can be made to see fail: nats.js's `ConsumerMessages` (a `QueuedIterator`), whose pending read then throws `err`. */
export interface StoppableSource<T> extends AsyncIterable<T> {
  stop(err?: Error): void;
}

function isStoppable<T>(source: AsyncIterable<T>): source is StoppableSource<T> {
  return typeof (source as Partial<StoppableSource<T>>).stop === 'function';
}

/**
 * The messages of `source` as they come, failing as `UNAVAILABLE` once none has arrived for `idleMs`: the
 * caller's start fails, and whoever supervises it (the lease, the projector's restart) tries again on a fresh
 * consumer. One timer watches the whole read, re-armed for what is left of the current wait when it fires early: a
 * timer and a race per message were a twentieth of a rebuild's CPU (issue 34).
 *
 * A source that can be stopped (every nats.js consumer) is read as it is, through an iterator that only notes when
 * each read starts and ends, and a silent one is stopped with the error; a wrapping async generator, with a promise of
 * its own around every read, cost a rebuild about 0.75 µs of its 20 per event (bench/README.md, issue 34). Any other
 * source is read through such a generator.
 */
export function withinReplayDeadline<T>(source: AsyncIterable<T>, what: string, idleMs = REPLAY_IDLE_MS): AsyncIterable<T> {
  const silent = () => new PlatformError('UNAVAILABLE', `${what}: no message from the log for ${idleMs} ms`);
  return isStoppable(source) ? stoppedWhenSilent(source, silent, idleMs) : racedAgainstSilence(source, silent, idleMs);
}

/** Watches the reads of one iteration: `onSilence` runs once a read has waited `idleMs`. */
class SilenceWatch {
  waiting = false;
  #waitStarted = 0;
  #timer: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(
    private readonly idleMs: number,
    private readonly onSilence: () => void,
  ) {
    this.#watch(idleMs);
  }

  reading(): void {
    this.#waitStarted = performance.now();
    this.waiting = true;
  }

  end(): void {
    this.#ended = true;
    clearTimeout(this.#timer);
  }

  #watch(delayMs: number): void {
    if (this.#ended) return;
    this.#timer = setTimeout(() => {
      const idle = performance.now() - this.#waitStarted;
      if (this.waiting && idle >= this.idleMs) this.onSilence();
      else this.#watch(this.waiting ? this.idleMs - idle : this.idleMs);
    }, delayMs);
  }
}

function stoppedWhenSilent<T>(source: StoppableSource<T>, silent: () => Error, idleMs: number): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const iterator = source[Symbol.asyncIterator]();
      const watch = new SilenceWatch(idleMs, () => {
        watch.end();
        source.stop(silent());
      });
      // Made once per read of the log, not per message.
      const arrived = (result: IteratorResult<T>) => {
        watch.waiting = false;
        if (result.done) watch.end();
      };
      const failed = () => watch.end();
      return {
        next() {
          watch.reading();
          const next = iterator.next();
          next.then(arrived, failed);
          return next;
        },
        return(value?: unknown) {
          watch.end();
          return iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined });
        },
      };
    },
  };
}

async function* racedAgainstSilence<T>(source: AsyncIterable<T>, silent: () => Error, idleMs: number): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let stall: ((err: Error) => void) | undefined;
  const watch = new SilenceWatch(idleMs, () => stall?.(silent()));
  try {
    for (;;) {
      watch.reading();
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        stall = reject;
        iterator.next().then(resolve, reject);
      });
      watch.waiting = false;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    watch.end();
    // The source learns the reader is gone, as a plain `for await` would tell it (a nats.js consumer stops
    // only then); when it is stuck on a next() it is not waited for.
    const returned = iterator.return?.();
    if (!watch.waiting) await returned;
  }
}
