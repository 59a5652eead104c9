import type { Database } from 'better-sqlite3';
import type { Rejection } from '../../schemas/deadLetters.ts';
import { eventCatalog, type PlatformEvent } from '../../schemas/events.ts';
import type { LogEntry } from '../platform/eventStore/eventStore.ts';
import { knownEvents, type KnownEvent } from '../platform/eventStore/knownEvents.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import { readCheckpoint, writeCheckpoint } from '../../projections/runtime/readModelDatabase.ts';

/** A log message as a projector applies it: the events it reads from it (none for a quarantined message). */
export interface ProjectedMessage {
  readonly seq: number;
  readonly subject: string;
  readonly messageId: string | null;
  readonly events: readonly KnownEvent<PlatformEvent>[];
}

/** A log entry ready to apply; a rejected one applies as no events (it only moves the checkpoint) and says why. */
export function projectEntry(entry: LogEntry): { message: ProjectedMessage; rejection?: Rejection } {
  const { seq, subject, messageId } = entry;
  const read = knownEvents(entry, eventCatalog);
  return read.rejection
    ? { message: { seq, subject, messageId, events: [] }, rejection: read.rejection }
    : { message: { seq, subject, messageId, events: read.events } };
}

/**
 * Applies a batch of log messages in one transaction together with the new checkpoint. Messages at or below the
 * stored checkpoint are skipped, which makes redelivery and replays no-ops; a quarantined message moves the
 * checkpoint without touching a row.
 */
export function applyBatch(db: Database, projection: Projection, messages: readonly ProjectedMessage[]): void {
  db.transaction(() => {
    const checkpoint = readCheckpoint(db);
    let last = checkpoint;
    for (const message of messages) {
      if (message.seq <= last.seq) continue;
      for (const { event, metadata } of message.events) projection.apply(db, event, metadata, message);
      last = { seq: message.seq, messageId: message.messageId };
    }
    if (last !== checkpoint) writeCheckpoint(db, last);
  })();
}
