import type { Database, Statement } from 'better-sqlite3';
import type { LogMessage } from '../../../projections/runtime/applyBatch.ts';
import type { Projection } from '../../../projections/runtime/projection.ts';
import type { Checkpoint } from '../../../projections/runtime/readModelDatabase.ts';
import { EventBatch } from '../../../schemas/envelope.ts';
import { eventCatalog, type PlatformEvent } from '../../../schemas/events.ts';

/**
 * Bench copy of `projections/runtime/applyBatch.ts` with the per-batch costs trimmed, to measure what they cost:
 * - `parse`: how a payload becomes an EventBatch (`zodEnvelope` is the product's `EventBatch.parse(JSON.parse())`;
 *   `trustEnvelope` trusts `JSON.parse`: the log only holds what the event store wrote);
 * - `data: 'trusted'` skips `eventCatalog.read` (upcast + zod parse of `data`), only to measure what it costs;
 * - checkpoint statements are prepared once per database instead of per batch.
 */
const checkpointStatements = new WeakMap<Database, { read: Statement; write: Statement }>();

function checkpointOf(db: Database) {
  let s = checkpointStatements.get(db);
  if (!s) {
    s = {
      read: db.prepare('SELECT seq, command_id AS commandId FROM _checkpoint WHERE id = 1'),
      write: db.prepare('UPDATE _checkpoint SET seq = ?, command_id = ? WHERE id = 1'),
    };
    checkpointStatements.set(db, s);
  }
  return s;
}

const decoder = new TextDecoder();

export function leanApplyBatch(
  db: Database,
  projection: Projection,
  messages: readonly LogMessage[],
  options: { parse: (text: string) => EventBatch; data: 'catalog' | 'trusted' },
): { applied: number; skipped: number } {
  let applied = 0;
  let skipped = 0;
  const cp = checkpointOf(db);
  db.transaction(() => {
    const checkpoint = (cp.read.get() as Checkpoint | undefined) ?? { seq: 0, commandId: null };
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
      last = { seq: message.seq, commandId: message.commandId };
    }
    if (last !== checkpoint) cp.write.run(last.seq, last.commandId);
  })();
  return { applied, skipped };
}

export const zodEnvelope = (text: string): EventBatch => EventBatch.parse(JSON.parse(text));
export const trustEnvelope = (text: string): EventBatch => JSON.parse(text) as EventBatch;
