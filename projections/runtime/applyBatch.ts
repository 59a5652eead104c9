import type { Database } from 'better-sqlite3';
import { EventBatch } from '../../schemas/envelope.ts';
import { eventCatalog } from '../../schemas/events.ts';
import type { Projection } from './projection.ts';
import { readCheckpoint, writeCheckpoint } from './readModelDatabase.ts';

/** A log message as a projector receives it, whatever consumer delivered it. */
export interface LogMessage {
  readonly seq: number;
  readonly subject: string;
  readonly commandId: string | null;
  readonly payload: Uint8Array;
}

const decoder = new TextDecoder();

/**
 * Applies a batch of log messages in one transaction together with the new checkpoint. Messages at or below the
 * stored checkpoint are skipped, which makes redelivery and replays no-ops. Event types this build does not know
 * are skipped too (a newer writer may have added them); they are counted, not fatal.
 */
export function applyBatch(db: Database, projection: Projection, messages: readonly LogMessage[]): { applied: number; skipped: number } {
  let applied = 0;
  let skipped = 0;
  db.transaction(() => {
    const checkpoint = readCheckpoint(db);
    let last = checkpoint;
    for (const message of messages) {
      if (message.seq <= last.seq) continue;
      const batch = EventBatch.parse(JSON.parse(decoder.decode(message.payload)));
      for (const stored of batch.events) {
        if (!eventCatalog.has(stored.type)) {
          skipped++;
          continue;
        }
        projection.apply(db, eventCatalog.read(stored), stored.metadata, message);
        applied++;
      }
      last = { seq: message.seq, commandId: message.commandId };
    }
    if (last !== checkpoint) writeCheckpoint(db, last);
  })();
  return { applied, skipped };
}
