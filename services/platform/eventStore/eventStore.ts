import {
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  type DirectMsgRequest,
  type JetStreamClient,
  type JetStreamManager,
  type MsgRequest,
  type StoredMsg,
} from '@nats-io/jetstream';
import { headers, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import type { Rejection } from '../../../schemas/deadLetters.ts';
import { EventBatch } from '../../../schemas/envelope.ts';
import { Streams } from '../../../schemas/subjects.ts';
import { ConcurrencyError, PlatformError, unavailableOnFailure } from '../errors.ts';
import { DecodedEntries } from './decodedEntries.ts';
import { EventHeaders, EventMac } from './eventMac.ts';

/** JetStream API error for a failed `Nats-Expected-Last-Subject-Sequence` check. */
const WRONG_LAST_SEQUENCE = 10071;

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
  rejection?: undefined;
}

/** A message on the event stream that no reader may act on: not written by the event store, or unreadable. */
export interface RejectedMessage {
  seq: number;
  subject: string;
  messageId: string | null;
  batch?: undefined;
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

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const UNAVAILABLE = 'event store is unavailable';

/**
 * The event log on JetStream. One message per command on the aggregate's own subject, guarded by the expected last
 * subject sequence, deduplicated by a message id keyed from the command id, and authenticated with the control
 * plane's event key (`EventMac`): every reader decodes through `decode`, which refuses what the store did not write.
 */
export class EventStore {
  readonly stream = Streams.events.name;
  readonly #decoded = new DecodedEntries<StoredBatch>();

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly mac: EventMac,
    /** True when the stream has more than one replica, so a `replica` read may answer behind the leader. */
    readonly readsMayLag: boolean,
  ) {}

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
   * The batch in a stream message, or why no reader may use it (checked before anything in it is parsed). A message
   * this process decoded lately comes back as the same entry (`DecodedEntries`).
   */
  decode(message: RawLogMessage): LogEntry {
    const { seq, subject, headers: hdrs, data } = message;
    const mac = hdrs?.get(EventHeaders.mac) ?? '';
    const decoded = mac ? this.#decoded.find(seq, subject, mac) : undefined;
    if (decoded) return decoded;
    const messageId = hdrs?.get(EventHeaders.messageId) || null;
    const rejection = this.mac.verify(subject, hdrs, data);
    if (rejection) return { seq, subject, messageId, rejection };
    let parsed: ReturnType<typeof EventBatch.safeParse>;
    try {
      parsed = EventBatch.safeParse(JSON.parse(decoder.decode(data)));
    } catch {
      return { seq, subject, messageId, rejection: { reason: 'UNDECODABLE', detail: 'not JSON' } };
    }
    if (!parsed.success) return { seq, subject, messageId, rejection: { reason: 'UNDECODABLE', detail: 'not an event batch' } };
    return this.#decoded.remember(mac, { seq, subject, messageId, batch: parsed.data });
  }

  /**
   * Appends one command's events. Resolves `{ duplicate: true }` with the original sequence when the command id was
   * already stored inside the duplicate window (JetStream checks dedupe before the expectation). Throws
   * `ConcurrencyError` when the subject moved past `expectedSeq`.
   */
  async append(subject: string, batch: EventBatch, options: { expectedSeq: number; msgId: string }): Promise<AppendResult> {
    const payload = encoder.encode(JSON.stringify(batch));
    const messageId = this.mac.messageId(options.msgId);
    const hdrs = headers();
    hdrs.set(EventHeaders.mac, this.mac.sign(subject, messageId, options.expectedSeq, payload));
    try {
      const ack = await this.js.publish(subject, payload, {
        msgID: messageId,
        expect: { lastSubjectSequence: options.expectedSeq },
        headers: hdrs,
      });
      return { seq: ack.seq, duplicate: ack.duplicate };
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) {
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
   * read then stops there without asking for one more), oldest first, via direct gets. Rejected messages come too: a
   * reader must not use them, but they still occupy their position on the subject.
   */
  async *entriesAfter(subject: string, afterSeq: number, throughSeq = Infinity, from: ReadFrom = 'replica'): AsyncGenerator<LogEntry> {
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
