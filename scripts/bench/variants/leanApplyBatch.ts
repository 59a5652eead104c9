import type { Database } from 'better-sqlite3';
import type { Projection } from '../../../projections/runtime/projection.ts';
import { readCheckpoint, writeCheckpoint } from '../../../projections/runtime/readModelDatabase.ts';
import { EventBatch } from '../../../schemas/envelope.ts';
import { eventCatalog, type PlatformEvent } from '../../../schemas/events.ts';

/**
 * Bench copy of `services/projectors/applyBatch.ts` with its validation made switchable, to measure what it costs:
 * - `parse`: how a payload becomes an EventBatch (`zodEnvelope` is the product's `EventBatch.parse(JSON.parse())`;
 *   `trustEnvelope` trusts `JSON.parse`: the log only holds what the event store wrote);
 * - `data: 'trusted'` skips `eventCatalog.read` (upcast + zod parse of `data`), only to measure what it costs.
 */
const decoder = new TextDecoder();

/** A fill message as the probes apply it: position, message id and raw payload (authenticity is not measured here). */
export interface RawFillMessage {
  readonly seq: number;
  readonly subject: string;
  readonly messageId: string | null;
  readonly payload: Uint8Array;
}

export function leanApplyBatch(
  db: Database,
  projection: Projection,
  messages: readonly RawFillMessage[],
  options: { parse: (text: string) => EventBatch; data: 'catalog' | 'trusted' },
): { applied: number; skipped: number } {
  let applied = 0;
  let skipped = 0;
  db.transaction(() => {
    const checkpoint = readCheckpoint(db);
    let last = checkpoint;
    for (const message of messages) {
      if (message.seq <= last.seq) continue;
      const batch = options.parse(decoder.decode(message.payload));
      for (const stored of batch.events) {
        if (!eventCatalog.has(stored.type)) {
          skipped++;
          continue;
        }
        const event = options.data === 'catalog' ? eventCatalog.read(stored) : (stored as unknown as PlatformEvent);
        projection.apply(db, event, stored.metadata, message);
        applied++;
      }
      last = { seq: message.seq, messageId: message.messageId };
    }
    if (last !== checkpoint) writeCheckpoint(db, last);
  })();
  return { applied, skipped };
}

export const zodEnvelope = (text: string): EventBatch => EventBatch.parse(JSON.parse(text));
export const trustEnvelope = (text: string): EventBatch => JSON.parse(text) as EventBatch;
