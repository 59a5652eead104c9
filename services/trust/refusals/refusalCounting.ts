import type { RefusalKind } from '../../../schemas/trust/refusals.ts';
import type { CommandBus } from '../../platform/commands/commandBus.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import type { Logger } from '../../platform/logger.ts';
import { RefusalTally, type RefusalTallyOptions, type RefusalTicket } from '../../platform/refusalTally.ts';
import { countRefusals } from './countRefusals.ts';

/** A request service's refusals: the first of each source in a window recorded, the others counted. */
export interface RefusalCounting {
  /** A request from `source` begins; a refusal of it may be recorded only when `record`. */
  admit(source: string): RefusalTicket;
  /**
   * The request ended with `err`: a refusal (a code the caller caused, status 4xx) is counted unless its ticket
   * records it; anything else gives the ticket back. Returns `err`, to be thrown on.
   */
  failed(ticket: RefusalTicket, err: unknown): unknown;
  /** Whether a refusal is worth a log line: only those with a record of their own (the others are in the count). */
  logs: (error: PlatformError) => boolean;
  /** Stops the window timer and appends what the running window counted. */
  stop(): Promise<void>;
}

/**
 * Counts `kind`'s refusals per window (`RefusalTally`) and, at the end of each window that counted any, appends one
 * `RefusalsCounted` on `bc.evt.trust.refusals.<kind>` and logs it once: an attack is visible with its busiest
 * sources, and neither the log nor the log file grows with the attempts.
 */
export function startRefusalCounting(bus: CommandBus, kind: RefusalKind, log: Logger, options: RefusalTallyOptions = {}): RefusalCounting {
  const tally = new RefusalTally(options);
  const counted = new WeakSet<object>();
  let flushing = Promise.resolve();
  const flush = (final: boolean) => {
    flushing = flushing.then(async () => {
      const count = tally.take(Date.now(), { final });
      if (!count) return;
      log.warn({ kind, refused: count.refused, from: count.from, to: count.to, sources: count.sources.slice(0, 5) }, 'refusals counted');
      await bus.execute({ name: countRefusals.name, payload: { kind, ...count }, actor: `refusals:${kind}` }).catch((err: unknown) => {
        log.error({ err, kind, refused: count.refused }, 'refusal count not recorded');
      });
    });
    return flushing;
  };
  const timer = setInterval(() => void flush(false), tally.windowMs);
  timer.unref();
  return {
    admit: (source) => tally.admit(source, Date.now()),
    failed(ticket, err) {
      if (!(err instanceof PlatformError) || err.status >= 500) {
        ticket.passed();
        return err;
      }
      ticket.refused(err.code);
      if (!ticket.record) counted.add(err);
      return err;
    },
    logs: (error) => !counted.has(error),
    stop: async () => {
      clearInterval(timer);
      await flush(true);
    },
  };
}
