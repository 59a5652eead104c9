import {
  jetstream,
  jetstreamManager,
  type DirectMsgRequest,
  type JetStreamClient,
  type JetStreamManager,
  type MsgRequest,
  type StoredMsg,
} from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import type { Rejection } from '../../../schemas/deadLetters.ts';
import type { EventBatch } from '../../../schemas/envelope.ts';
import { Streams } from '../../../schemas/subjects.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import { ConcurrencyError, unavailableOnFailure } from '../errors.ts';
import { AppendHeaders } from './appendHeaders.ts';
import { isEventBatch } from './eventBatchShape.ts';
import { eventHeaderValues } from './eventHeaderValues.ts';
import { EventHeaders, EventMac } from './eventMac.ts';
import { isWrongLastSequence } from '../nats/wrongLastSequence.ts';
import { streamPublisher, type StreamAck } from '../nats/streamPublish.ts';
import { replaySubject } from './subjectReplay.ts';

export interface AppendResult {
  seq: number;
  duplicate: boolean;
}

/** A message of the event stream as any consumer or direct get delivers it. */
export interface RawLogMessage {
  readonly seq: number;
  readonly subject: string;
  readonly headers: MsgHdrs | undefined;
  readonly data: Uint8Array;
}

/** A message the event store wrote, decoded. `messageId` (`Nats-Msg-Id`) tells one stored message from another. */
export interface StoredBatch {
  seq: number;
  subject: string;
  messageId: string | null;
  batch: EventBatch;
  /** How many messages its subject held with it, as its writer knew (MAC-covered); undefined when written without. */
  position?: number | undefined;
  /**
   * The aggregate's state after this message as its writer folded it (`Bc-Aggregate-State`, MAC-covered, unparsed:
   * `aggregateState.ts` reads it); undefined when written without one.
   */
  state?: string | undefined;
  rejection?: undefined;
}

/** A message on the event stream that no reader may act on: not written by the event store, or unreadable. */
export interface RejectedMessage {
  seq: number;
  subject: string;
  messageId: string | null;
  batch?: undefined;
  position?: undefined;
  state?: undefined;
  rejection: Rejection;
}

export type LogEntry = StoredBatch | RejectedMessage;

/** A subject's last message: decoded, or only its sequence when it is the one the caller said it holds. */
export type LastEntry =
  | { readonly seq: number; readonly held: true }
  | { readonly seq: number; readonly held: false; readonly entry: LogEntry; readonly previousSeq: number | undefined };

/**
 * Who answers a read. `replica`: a direct get, taken by any replica of the stream (the one on the reader's server
 * first); on a cluster, one still catching up answers without the latest appends (direct gets promise no
 * read-your-writes: nats-server #3238). `leader`: the stream leader (`STREAM.MSG.GET`), which holds every append it
 * acknowledged. With one replica they are the same server, and a direct get is used for both.
 */
export type ReadFrom = 'replica' | 'leader';

const decoder = new TextDecoder();
const UNAVAILABLE = 'event store is unavailable';
/**
 * Up to this many messages a direct get each costs no more than one filtered consumer: a consumer's create and delete
 * cost the server about what 4 to 6 direct gets do, and take as long as 4 (bench/README.md, cold loads). A span of
 * stream sequences holds at most as many messages of the subject.
 */
const DIRECT_GETS_UP_TO = 4;
/**
 * How many messages `entriesEndingAt` reads by their predecessor's sequence before it replays the rest: an exact
 * direct get costs a round trip but no consumer, and up to this many take no longer than a consumer's one request
 * (bench/README.md, cold loads). With the last message's get, an aggregate of up to 5 messages loads without a consumer;
 * a longer one whose last message tells its position replays at once.
 */
const PREDECESSOR_GETS_UP_TO = 4;

/** A `Bc-Event-Position` value as a count of messages, or undefined when absent or not one. */
function positionOf(value: string): number | undefined {
  if (value === '') return undefined;
  const position = Number(value);
  return Number.isSafeInteger(position) && position > 0 ? position : undefined;
}

/**
 * The event log on JetStream. One message per command on the aggregate's own subject, guarded by the expected last
 * subject sequence, deduplicated by a message id keyed from the command id, and authenticated with the control
 * plane's event key (`EventMac`): every reader decodes through `decode`, which refuses what the store did not write.
 */
export class EventStore {
  readonly stream = Streams.events.name;
  /** `js.publish` with the headers `append` builds itself, acknowledged on one inbox subscription (`streamPublish.ts`). */
  readonly #publish: (subject: string, payload: Uint8Array, headers: AppendHeaders) => Promise<StreamAck>;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly mac: EventMac,
    /** True when the stream has more than one replica, so a `replica` read may answer behind the leader. */
    readonly readsMayLag: boolean,
  ) {
    this.#publish = streamPublisher(js);
  }

  static async open(nc: NatsConnection, mac: EventMac, options: { replicas?: number } = {}): Promise<EventStore> {
    return new EventStore(nc, jetstream(nc), await jetstreamManager(nc), mac, (options.replicas ?? 1) > 1);
  }

  private get(query: DirectMsgRequest, from: ReadFrom): Promise<StoredMsg | null> {
    // STREAM.MSG.GET takes `next_by_subj` as a direct get does (nats-server 2.9); the client's type leaves it out.
    const read =
      from === 'leader' && this.readsMayLag ? this.jsm.streams.getMessage(this.stream, query as MsgRequest) : this.jsm.direct.getMessage(this.stream, query);
    return unavailableOnFailure(read, UNAVAILABLE);
  }

  /**
   * The batch in a stream message, or why no reader may use it (checked before anything in it is parsed). Every call
   * verifies and parses afresh: a memo of recent decodes (2,048 messages) kept every entry alive long enough to reach
   * the old generation, and cost a catch-up more in garbage collection than it saved readers (bench/README.md).
   * `seq` is for a caller that read the message's sequence already (a delivered message's `seq` getter parses its
   * whole ack subject: `deliveredStreamSequence`).
   */
  decode(message: RawLogMessage, seq = message.seq): LogEntry {
    // Not `message.headers`: nats.js decodes every header behind that getter (`eventHeaderValues`).
    const { subject, data } = message;
    const values = eventHeaderValues(message);
    const messageId = values.messageId || null;
    const positionHeader = values.position;
    const rejection = this.mac.verifyValues(subject, values.mac, values.messageId, values.expectedSeq, data, positionHeader, values.state);
    if (rejection) return { seq, subject, messageId, rejection };
    let batch: unknown;
    try {
      batch = JSON.parse(decoder.decode(data));
    } catch {
      return { seq, subject, messageId, rejection: { reason: 'UNDECODABLE', detail: 'not JSON' } };
    }
    if (!isEventBatch(batch)) return { seq, subject, messageId, rejection: { reason: 'UNDECODABLE', detail: 'not an event batch' } };
    return { seq, subject, messageId, batch, position: positionOf(positionHeader), state: values.state || undefined };
  }

  /**
   * Appends one command's events. Resolves `{ duplicate: true }` with the original sequence when the command id was
   * already stored inside the duplicate window (JetStream checks dedupe before the expectation). Throws
   * `ConcurrencyError` when the subject moved past `expectedSeq`. `position`, how many messages the subject holds
   * with this one (the aggregate's length the writer read), is stored with it so a load knows at its first get how
   * long the aggregate is (`entriesEndingAt`). `state`, the aggregate's state after this message (with a position
   * only), lets a cold load stop at this message's one get (`aggregateState.ts`); readers of the events skip it.
   */
  async append(
    subject: string,
    batch: EventBatch,
    options: { expectedSeq: number; msgId: string; position?: number; state?: string | undefined },
  ): Promise<AppendResult> {
    // `Buffer.from`, not `TextEncoder`: the same UTF-8 bytes at a fraction of the price for a few hundred bytes.
    const payload = Buffer.from(JSON.stringify(batch));
    const messageId = this.mac.messageId(options.msgId);
    const { expectedSeq, position, state } = options;
    const mac = this.mac.sign(subject, messageId, expectedSeq, payload, position, state);
    const hdrs = new AppendHeaders({ position, state, mac, messageId, expectedSeq });
    try {
      // The message id and the expected last subject sequence are in `hdrs` (`Nats-Msg-Id`, `Nats-Expected-Last-Subject-Sequence`).
      const ack = await this.#publish(subject, payload, hdrs);
      return { seq: ack.seq, duplicate: ack.duplicate };
    } catch (err) {
      if (isWrongLastSequence(err)) {
        throw new ConcurrencyError(subject, options.expectedSeq, { cause: err });
      }
      throw new PlatformError('UNAVAILABLE', 'event store append failed', { cause: err });
    }
  }

  /** The stream sequence of the last message on `subject`, 0 when it has none (one direct get). */
  async lastSequence(subject: string): Promise<number> {
    const msg = await this.get({ last_by_subj: subject }, 'replica');
    return msg?.seq ?? 0;
  }

  /**
   * The last message on `subject`, decoded (one direct get, the same one `lastSequence` costs), with the sequence the
   * store appended it after: its `Nats-Expected-Last-Subject-Sequence`, which the MAC covers, so it is known only for a
   * message the store wrote. Undefined when the subject has no message. When the last message is at `heldSeq` (the
   * caller holds it already), only its sequence comes back: verifying and parsing it again would tell nothing new.
   */
  async lastEntry(subject: string, heldSeq?: number, from: ReadFrom = 'replica'): Promise<LastEntry | undefined> {
    const msg = await this.get({ last_by_subj: subject }, from);
    if (!msg) return undefined;
    if (msg.seq === heldSeq) return { seq: msg.seq, held: true };
    const entry = this.decode(fromStored(msg));
    const previous = entry.rejection ? undefined : Number(msg.header.get(EventHeaders.expectedSeq));
    return { seq: msg.seq, held: false, entry, previousSeq: previous !== undefined && Number.isSafeInteger(previous) ? previous : undefined };
  }

  /**
   * Every message on `subject` with stream sequence greater than `afterSeq` (and at most `throughSeq`, when given: the
   * read then stops there without asking for one more), oldest first. Rejected messages come too: a reader must not
   * use them, but they still occupy their position on the subject. One request whatever the subject's length
   * (`replaySubject`, a filtered consumer: it answers like a replica); a leader read on a cluster, and a span of stream
   * sequences that holds at most `DIRECT_GETS_UP_TO` messages, take a direct get per message (`directEntriesAfter`).
   */
  async *entriesAfter(subject: string, afterSeq: number, throughSeq = Infinity, from: ReadFrom = 'replica'): AsyncGenerator<LogEntry> {
    if ((from === 'leader' && this.readsMayLag) || throughSeq - afterSeq <= DIRECT_GETS_UP_TO) {
      yield* this.directEntriesAfter(subject, afterSeq, throughSeq, from);
      return;
    }
    for await (const message of replaySubject(this.nc, this.stream, subject, afterSeq, throughSeq)) yield this.decode(message);
  }

  /**
   * `entriesAfter` through `endSeq`, a message on `subject` that a later one names as its predecessor (its MAC-covered
   * expected sequence, `LastEntry.previousSeq`). Each message the store wrote names its own predecessor the same way,
   * so the read walks back from `endSeq` by exact direct gets, `PREDECESSOR_GETS_UP_TO` at most, without a consumer.
   * Where the chain goes on further, or a message on it cannot tell its predecessor (rejected: no trustworthy header;
   * not there: a replica behind, or deleted), the rest comes from `entriesAfter` through the point reached. A replica
   * read on a cluster that did not reach that point stops there (the caller sees the read fell short of `endSeq`).
   * `messages`, how many the read returns when the caller knows (from the last message's position): more than the
   * walk reads, and the whole read is one `entriesAfter` at once, rather than the gets first and a replay after them.
   */
  async *entriesEndingAt(subject: string, afterSeq: number, endSeq: number, from: ReadFrom = 'replica', messages?: number): AsyncGenerator<LogEntry> {
    if (messages !== undefined && messages > PREDECESSOR_GETS_UP_TO) {
      yield* this.entriesAfter(subject, afterSeq, endSeq, from);
      return;
    }
    const walked: LogEntry[] = [];
    // The sequence still to read back to: the next message on the chain, or one the walk could not use (read again).
    let cursor = endSeq;
    while (cursor > afterSeq && walked.length < PREDECESSOR_GETS_UP_TO) {
      const msg = await this.get({ seq: cursor }, from);
      if (!msg || msg.subject !== subject) break;
      const entry = this.decode(fromStored(msg));
      const previous = entry.rejection ? NaN : Number(msg.header.get(EventHeaders.expectedSeq));
      if (!Number.isSafeInteger(previous) || previous >= cursor) break;
      walked.push(entry);
      cursor = previous;
    }
    if (cursor > afterSeq) {
      let reached = afterSeq;
      for await (const entry of this.entriesAfter(subject, afterSeq, cursor, from)) {
        yield entry;
        reached = entry.seq;
      }
      // Short of a message the chain names: on a replica that may lag, the walked messages would leave a gap before
      // them, so none is yielded. Elsewhere the message is gone from the log (deleted), as a scan would find it.
      if (reached !== cursor && from === 'replica' && this.readsMayLag) return;
    }
    for (let i = walked.length - 1; i >= 0; i--) yield walked[i]!;
  }

  /** `entriesAfter` by one direct get per message (and one more that finds none, unless `throughSeq` stops it). */
  async *directEntriesAfter(subject: string, afterSeq: number, throughSeq = Infinity, from: ReadFrom = 'replica'): AsyncGenerator<LogEntry> {
    let next = afterSeq + 1;
    while (next <= throughSeq) {
      const msg = await this.get({ next_by_subj: subject, seq: next }, from);
      if (!msg || msg.seq > throughSeq) return;
      yield this.decode(fromStored(msg));
      next = msg.seq + 1;
    }
  }

  /** The batches the event store wrote on `subject` after `afterSeq`, oldest first (anything else is left out). */
  async *readAfter(subject: string, afterSeq: number): AsyncGenerator<StoredBatch> {
    for await (const entry of this.entriesAfter(subject, afterSeq)) if (!entry.rejection) yield entry;
  }

  /** The message stored at `seq`, or undefined when the stream has none there. */
  async readAt(seq: number, from: ReadFrom = 'replica'): Promise<LogEntry | undefined> {
    const msg = await this.get({ seq }, from);
    return msg ? this.decode(fromStored(msg)) : undefined;
  }

  /** Current last sequence of the whole stream. */
  async streamLastSequence(): Promise<number> {
    const info = await unavailableOnFailure(this.jsm.streams.info(this.stream), UNAVAILABLE);
    return info.state.last_seq;
  }
}

const fromStored = (msg: StoredMsg): RawLogMessage => ({ seq: msg.seq, subject: msg.subject, headers: msg.header, data: msg.data });
