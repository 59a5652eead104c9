/** Delays between restarts of a supervised process. */
export interface RestartBackoffOptions {
  /** The first delay, and the delay again after a stable run. Default 1 s. */
  initialMs?: number;
  /** The longest delay. Default 15 s. */
  maxMs?: number;
  /** A run at least this long counts as stable: the next crash is treated as a first one. Default 30 s. */
  stableAfterMs?: number;
}

/**
 * Doubling restart delays that start over after a stable run: a process that crash-loops is restarted ever more
 * slowly (up to `maxMs`), while one that ran for a while and then died once comes back after `initialMs`, as if
 * it had never failed.
 */
export class RestartBackoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #stableAfterMs: number;
  #nextMs: number;

  constructor(options: RestartBackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 1_000;
    this.#maxMs = options.maxMs ?? 15_000;
    this.#stableAfterMs = options.stableAfterMs ?? 30_000;
    this.#nextMs = this.#initialMs;
  }

  /** The delay before the next start, given how long the run that just ended lasted. */
  delayAfter(ranForMs: number): number {
    if (ranForMs >= this.#stableAfterMs) this.#nextMs = this.#initialMs;
    const delay = this.#nextMs;
    this.#nextMs = Math.min(delay * 2, this.#maxMs);
    return delay;
  }
}
