import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.ts';
import { isTransportFailure } from './transportFailure.ts';

/**
 * Runs `attempt` until it succeeds, waiting between tries (250 ms, doubling up to 5 s) while it fails only
 * because the server did not answer (`isTransportFailure`: nothing listening, a dial or handshake that timed out on a
 * loaded host, a server stopped or still recovering JetStream). Any other failure (wrong credentials, a server that
 * lets anyone in, a malformed key) is thrown at once: waiting would not change it. A process starting before its
 * server, or on a host too busy to answer within the dial timeout, so waits instead of dying and being restarted.
 */
export async function retryWhileUnreachable<T>(what: string, attempt: () => Promise<T>, log: Logger): Promise<T> {
  let delayMs = 250;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransportFailure(err)) throw err;
      log.warn({ what, tries, retryInMs: delayMs, err: String(err) }, 'NATS did not answer at start-up; trying again');
      await sleep(delayMs);
      delayMs = Math.min(delayMs * 2, 5_000);
    }
  }
}
