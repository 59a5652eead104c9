import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { DeliverPolicy } from '@nats-io/jetstream';
import type { Database } from 'better-sqlite3';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { DeadLetterQueue } from '../platform/deadLetters/deadLetterQueue.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import { withinReplayDeadline } from '../platform/nats/replayDeadline.ts';
import { applyBatch, projectEntry, type ProjectedMessage } from './applyBatch.ts';
import { BATCH } from './batchWindow.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import { readCheckpoint } from '../../projections/runtime/readModelDatabase.ts';

/** As the live session's batches (`BATCH`), and for the same reason: a longer batch keeps more garbage alive. */
const MAX_TRANSACTION = BATCH;
/** About how long the replay holds the event loop before giving it back (decoding plus one transaction). */
const SLICE_MS = 50;

/**
 * Replays the log from just past `db`'s checkpoint up to the stream's last sequence at the start of the replay,
 * through an ordered consumer (no acks), in transactions of up to `BATCH` messages. What may not be applied goes to
 * `deadLetters` on the way. Returns the checkpoint reached.
 *
 * The replay gives the event loop back every ~50 ms: transactions are cut by the time they are expected to take (the
 * cost per message is learned from each one), and the loop yields between them. The consumer hands over thousands of
 * buffered messages without ever yielding, so a replay that did not would hold the process for as long as they take
 * to apply; on a busy machine that was seconds, and everything sharing the process stalled: an API in the same
 * process saw its JetStream publish acks time out (5 s) and answered appends with 503.
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
  // Start cautious (a read model may be expensive per event) and learn from every transaction.
  let msPerMessage = 1;
  let sliceStart = performance.now();
  try {
    for await (const m of withinReplayDeadline(messages, `${projection.name} replay`)) {
      const { message, rejection } = projectEntry(store.decode(m));
      if (rejection) await deadLetters.quarantine({ stream: Streams.events.name, seq: m.seq, subject: m.subject, data: m.data }, rejection);
      batch.push(message);
      const done = m.seq >= target || m.info.pending === 0;
      const sliceUsed = performance.now() - sliceStart + batch.length * msPerMessage >= SLICE_MS;
      if (done || sliceUsed || batch.length >= MAX_TRANSACTION) {
        const started = performance.now();
        applyBatch(db, projection, batch);
        msPerMessage = (performance.now() - started) / batch.length;
        batch = [];
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
      if (done) break;
    }
  } finally {
    await messages.close();
  }
  return readCheckpoint(db).seq;
}
