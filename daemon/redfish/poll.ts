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
