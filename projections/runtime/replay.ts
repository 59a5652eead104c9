import { DeliverPolicy } from '@nats-io/jetstream';
import type { Database } from 'better-sqlite3';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import { applyBatch, type LogMessage } from './applyBatch.ts';
import type { Projection } from './projection.ts';
import { readCheckpoint } from './readModelDatabase.ts';

const REPLAY_BATCH = 2_000;

/**
 * Replays the log from just past `db`'s checkpoint up to the stream's last sequence at the start of the replay,
 * through an ordered consumer (no acks), in large transactions. Returns the checkpoint reached.
 */
export async function replayInto(store: EventStore, db: Database, projection: Projection): Promise<number> {
  const from = readCheckpoint(db).seq;
  const target = await store.streamLastSequence();
  if (target <= from) return from;
  const consumer = await store.js.consumers.get(Streams.events.name, {
    filter_subjects: Subjects.allEvents,
    deliver_policy: from > 0 ? DeliverPolicy.StartSequence : DeliverPolicy.All,
    ...(from > 0 ? { opt_start_seq: from + 1 } : {}),
  });
  const messages = await consumer.consume({ max_messages: 5_000 });
  let batch: LogMessage[] = [];
  try {
    for await (const m of messages) {
      batch.push({ seq: m.seq, subject: m.subject, commandId: m.headers?.get('Nats-Msg-Id') ?? null, payload: m.data });
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
