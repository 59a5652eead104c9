import { DeliverPolicy } from '@nats-io/jetstream';
import type { Database } from 'better-sqlite3';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { DeadLetterQueue } from '../../services/platform/deadLetters/deadLetterQueue.ts';
import type { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import { applyBatch, projectEntry, type ProjectedMessage } from './applyBatch.ts';
import type { Projection } from './projection.ts';
import { readCheckpoint } from './readModelDatabase.ts';

const REPLAY_BATCH = 2_000;

/**
 * Replays the log from just past `db`'s checkpoint up to the stream's last sequence at the start of the replay,
 * through an ordered consumer (no acks), in large transactions. What may not be applied goes to `deadLetters` on the
 * way. Returns the checkpoint reached.
 */
export async function replayInto(store: EventStore, db: Database, projection: Projection, deadLetters: DeadLetterQueue): Promise<number> {
  const from = readCheckpoint(db).seq;
  const target = await store.streamLastSequence();
  if (target <= from) return from;
  const consumer = await store.js.consumers.get(Streams.events.name, {
    filter_subjects: Subjects.allEvents,
    deliver_policy: from > 0 ? DeliverPolicy.StartSequence : DeliverPolicy.All,
    ...(from > 0 ? { opt_start_seq: from + 1 } : {}),
  });
  const messages = await consumer.consume({ max_messages: 5_000 });
  let batch: ProjectedMessage[] = [];
  try {
    for await (const m of messages) {
      const { message, rejection } = projectEntry(store.decode(m));
      if (rejection) await deadLetters.quarantine({ stream: Streams.events.name, seq: m.seq, subject: m.subject, data: m.data }, rejection);
      batch.push(message);
      const done = m.seq >= target || m.info.pending === 0;
      if (batch.length >= REPLAY_BATCH || done) {
        applyBatch(db, projection, batch);
        batch = [];
      }
      if (done) break;
    }
  } finally {
    await messages.close();
  }
  return readCheckpoint(db).seq;
}
