/**
 * Messages applied in one transaction per read model at most, unless more arrived while one was being stored. Past a
 * few hundred the transaction's own cost is spread thin, and what grows is the garbage collector's: every message of
 * a batch, delivered and decoded, is alive until the batch is applied, and each young-generation collection copies
 * it. A catch-up cost 18 µs of CPU per event in batches of 250, 20 in batches of 100, 22-23 in batches of 500 or
 * 1,000 (`scripts/bench/probe/catchUpSplit.ts --batch N`, bench/README.md). Live traffic rarely fills one: a batch
 * also ends with its window (`BatchWindow`).
 */
export const BATCH = 250;
/** How long a batch's first message waits for more while the log is quiet: a lone command shows up soon after. */
export const QUIET_WINDOW_MS = 10;
/**
 * How long it waits while messages keep coming. Every batch costs each read model a SQLite transaction (with its
 * checkpoint read and write) and the consumer an ack; under a steady stream, five times fewer batches cut the
 * projectors' CPU per fleet step by about a fifth (bench/README.md), for at most this much more lag.
 */
export const BUSY_WINDOW_MS = 50;

/**
 * Chooses how long the next batch collects messages. The log counts as busy when that batch's first message arrived
 * within `BUSY_WINDOW_MS` of the previous flush: messages have been arriving at least that often since. A first
 * message after a quiet spell (an operator's command, a test's single step) gets the short window, so read-your-writes
 * waits stay as short as before.
 */
export class BatchWindow {
  #lastFlushMs = -Infinity;

  constructor(private readonly now: () => number = performance.now.bind(performance)) {}

  /** The window for a batch whose first message arrives now. */
  forFirstMessage(): number {
    return this.now() - this.#lastFlushMs < BUSY_WINDOW_MS ? BUSY_WINDOW_MS : QUIET_WINDOW_MS;
  }

  /** A batch was taken for applying. */
  flushed(): void {
    this.#lastFlushMs = this.now();
  }
}
