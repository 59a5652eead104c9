import type { FastifyInstance } from 'fastify';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import { PlatformError } from '../../schemas/platformError.ts';

/**
 * `?minSeq=` asks a read model to have applied that position of the log first (read-your-writes). A position beyond
 * the log's end can never be reached: it is refused at once with 400 `MIN_SEQ_AHEAD` instead of being waited for
 * until 504 `READ_MODEL_BEHIND`. Runs before any other `preHandler` (tenancy waits on `minSeq` too).
 */
export function installMinSeqCheck(app: FastifyInstance, store: EventStore): void {
  // The log's end as last read: it only grows, so a position at or below it needs no request to the server.
  let logEnd = 0;
  app.addHook('preHandler', async (req) => {
    const minSeq = (req.query as { minSeq?: unknown } | undefined)?.minSeq;
    if (typeof minSeq !== 'number' || minSeq <= logEnd) return;
    logEnd = Math.max(logEnd, await store.streamLastSequence());
    if (minSeq > logEnd)
      throw new PlatformError('MIN_SEQ_AHEAD', `minSeq ${minSeq} is beyond the end of the log (${logEnd}): no read model will ever reach it`);
  });
}
