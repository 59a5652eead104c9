import { RedfishError } from './errors.ts';

export interface PollOptions {
  intervalMs: number;
  timeoutMs: number;
  /** Used in the timeout message, e.g. "PowerState to become On". */
  what: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Re-reads until `done` holds. BMCs accept a request long before the hardware follows (power sequencing,
 * image mounts, firmware flashes), so every state change is confirmed by reading it back.
 */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, options: PollOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() + options.intervalMs > deadline) {
      throw new RedfishError('REDFISH_TIMEOUT', `Timed out after ${options.timeoutMs} ms waiting for ${options.what}`);
    }
    await sleep(options.intervalMs);
  }
}

/**
 * Re-reads until `done` holds or `options.timeoutMs` passes, and says which: for waits whose running out is an
 * answer rather than an error (a reset that left no trace, an override that never showed).
 */
export async function pollWithin<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  options: Omit<PollOptions, 'what'>,
): Promise<{ value: T; done: boolean }> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return { value, done: true };
    const left = deadline - Date.now();
    if (left <= 0) return { value, done: false };
    // The last look is at the deadline itself, so the whole window is watched even with a long interval.
    await sleep(Math.min(options.intervalMs, left));
  }
}
