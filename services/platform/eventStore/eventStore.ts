import { jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { EventBatch } from '../../../schemas/envelope.ts';
import { Streams } from '../../../schemas/subjects.ts';
import { ConcurrencyError, PlatformError } from '../errors.ts';

/** JetStream API error for a failed `Nats-Expected-Last-Subject-Sequence` check. */
const WRONG_LAST_SEQUENCE = 10071;

export interface AppendResult {
  seq: number;
  duplicate: boolean;
}

export interface StoredBatch {
  seq: number;
  subject: string;
  batch: EventBatch;
}

const encoder = new TextEncoder();

/**
 * The event log on JetStream. One message per command on the aggregate's own subject, guarded by the expected last
 * subject sequence and deduplicated by the command id (`Nats-Msg-Id`).
 */
export class EventStore {
  readonly stream = Streams.events.name;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
  ) {}

  static async open(nc: NatsConnection): Promise<EventStore> {
    return new EventStore(nc, jetstream(nc), await jetstreamManager(nc));
  }

  /**
   * Appends one command's events. Resolves `{ duplicate: true }` with the original sequence when the command id was
   * already stored inside the duplicate window (JetStream checks dedupe before the expectation). Throws
   * `ConcurrencyError` when the subject moved past `expectedSeq`.
   */
  async append(subject: string, batch: EventBatch, options: { expectedSeq: number; msgId: string }): Promise<AppendResult> {
    try {
      const ack = await this.js.publish(subject, encoder.encode(JSON.stringify(batch)), {
        msgID: options.msgId,
        expect: { lastSubjectSequence: options.expectedSeq },
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
    const msg = await unavailableOnFailure(this.jsm.direct.getMessage(this.stream, { last_by_subj: subject }));
    return msg?.seq ?? 0;
  }

  /** The messages on `subject` with stream sequence greater than `afterSeq`, oldest first, via direct gets. */
  async *readAfter(subject: string, afterSeq: number): AsyncGenerator<StoredBatch> {
    let next = afterSeq + 1;
    for (;;) {
      const msg = await unavailableOnFailure(this.jsm.direct.getMessage(this.stream, { next_by_subj: subject, seq: next }));
      if (!msg) return;
      yield { seq: msg.seq, subject: msg.subject, batch: EventBatch.parse(msg.json()) };
      next = msg.seq + 1;
    }
  }

  /** The message stored at `seq`, or undefined when the stream has none there. */
  async readAt(seq: number): Promise<StoredBatch | undefined> {
    const msg = await unavailableOnFailure(this.jsm.direct.getMessage(this.stream, { seq }));
    return msg ? { seq: msg.seq, subject: msg.subject, batch: EventBatch.parse(msg.json()) } : undefined;
  }

  /** Current last sequence of the whole stream. */
  async streamLastSequence(): Promise<number> {
    const info = await unavailableOnFailure(this.jsm.streams.info(this.stream));
    return info.state.last_seq;
  }
}

/** Timeouts, missing responders and closed connections while the server restarts: retryable, not internal. */
async function unavailableOnFailure<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (err) {
    throw new PlatformError('UNAVAILABLE', 'event store is unavailable', { cause: err });
  }
}
