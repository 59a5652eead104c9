import { createInbox, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { EventHeaders } from '../../services/platform/eventStore/eventMac.ts';
import type { EventStore } from '../../services/platform/eventStore/eventStore.ts';

const decoder = new TextDecoder();

export interface FillResult {
  firstSeq: number;
  lastSeq: number;
  seconds: number;
}

/**
 * Fills a stream cheaply: core publishes with a reply subject under one wildcard inbox subscription and a bounded
 * window of unacked messages, instead of one `js.publish` request (timer, promise, per-request bookkeeping) each.
 * Every ack is still checked, so a rejected message fails the fill.
 */
export async function fastFill(
  nc: NatsConnection,
  count: number,
  make: (i: number) => { subject: string; data: Uint8Array; headers?: Record<string, string> },
  window = 4_096,
): Promise<FillResult> {
  const started = performance.now();
  const inbox = createInbox();
  let inFlight = 0;
  let acked = 0;
  let firstSeq = Number.MAX_SAFE_INTEGER;
  let lastSeq = 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;

  const sub = nc.subscribe(`${inbox}.*`, {
    callback: (err: Error | null, msg: Msg) => {
      inFlight--;
      acked++;
      if (err) failure ??= err;
      else {
        const ack = JSON.parse(decoder.decode(msg.data)) as { seq?: number; error?: { description: string } };
        if (ack.error || ack.seq === undefined) failure ??= new Error(`fill publish rejected: ${decoder.decode(msg.data)}`);
        else {
          if (ack.seq < firstSeq) firstSeq = ack.seq;
          if (ack.seq > lastSeq) lastSeq = ack.seq;
        }
      }
      if (wake && (inFlight <= window / 2 || acked === count || failure)) {
        const w = wake;
        wake = undefined;
        w();
      }
    },
  });
  try {
    for (let i = 0; i < count; i++) {
      if (failure) throw failure;
      while (inFlight >= window) await new Promise<void>((resolve) => (wake = resolve));
      const m = make(i);
      const h = m.headers ? headers() : undefined;
      for (const [name, value] of Object.entries(m.headers ?? {})) h!.set(name, value);
      inFlight++;
      nc.publish(m.subject, m.data, { reply: `${inbox}.${i}`, ...(h ? { headers: h } : {}) });
    }
    const deadline = Date.now() + 60_000;
    while (acked < count && !failure) {
      if (Date.now() > deadline) throw new Error(`fill: only ${acked} of ${count} acks after 60 s`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 200);
      });
    }
    if (failure) throw failure;
  } finally {
    sub.unsubscribe();
  }
  return { firstSeq, lastSeq, seconds: (performance.now() - started) / 1000 };
}

/** A fill message of the event log: `previousIndex` is the fill index of the previous message on its subject. */
export interface EventFillMessage {
  subject: string;
  data: Uint8Array;
  commandId: string;
  previousIndex: number | undefined;
}

/**
 * `fastFill` for the event log, written as the event store writes: keyed message id, expected last subject sequence
 * and MAC, so consumers accept the messages. Fill index `from + i` lands at stream sequence `last + 1 + i` (one
 * publisher, in order), which gives each message the expected sequence of its subject's previous one; the server
 * checks every expectation, so a wrong guess fails the fill. Index 0 of a run of fills must follow a purge or an
 * empty stream, and nothing else may be appended between fills.
 */
export async function fastFillEvents(store: EventStore, from: number, count: number, make: (index: number) => EventFillMessage): Promise<FillResult> {
  const base = (await store.streamLastSequence()) + 1 - from;
  return fastFill(store.nc, count, (i) => {
    const m = make(from + i);
    const messageId = store.mac.messageId(m.commandId);
    const expected = m.previousIndex === undefined ? 0 : base + m.previousIndex;
    return {
      subject: m.subject,
      data: m.data,
      headers: {
        [EventHeaders.messageId]: messageId,
        [EventHeaders.expectedSeq]: String(expected),
        [EventHeaders.mac]: store.mac.sign(m.subject, messageId, expected, m.data),
      },
    };
  });
}
