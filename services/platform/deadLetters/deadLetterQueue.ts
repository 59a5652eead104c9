import { createHash } from 'node:crypto';
import { jetstream, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { DeadLetter, Rejection } from '../../../schemas/deadLetters.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import type { Logger } from '../logger.ts';

const HEAD_BYTES = 4096;

/** A message a consumer refuses: where it sits and its bytes. */
export interface QuarantinedMessage {
  readonly stream: string;
  readonly seq: number;
  readonly subject: string;
  readonly data: Uint8Array;
}

/**
 * Where one consumer sets aside the messages it must not act on (`BC_DEAD_LETTERS`, `bc.dlq.<consumer>.<seq>`), so it
 * can move on instead of stopping at them. A consumer acks such a message only once its entry is stored; meeting
 * the same message again (a redelivery, a rebuild) replaces the entry rather than adding one.
 */
export class DeadLetterQueue {
  readonly #js: JetStreamClient;

  constructor(
    nc: NatsConnection,
    readonly consumer: string,
    private readonly log: Logger,
  ) {
    this.#js = jetstream(nc);
  }

  /** Dead-letters a message of an explicit-ack consumer, then acks it; naks it (so it comes back) if that failed. */
  setAside(msg: JsMsg, rejection: Rejection): void {
    this.quarantine({ stream: msg.info.stream, seq: msg.seq, subject: msg.subject, data: msg.data }, rejection).then(
      () => msg.ack(),
      (err: unknown) => {
        this.log.error({ err, consumer: this.consumer, seq: msg.seq }, 'could not dead-letter a message; it comes back');
        msg.nak(1_000);
      },
    );
  }

  async quarantine(message: QuarantinedMessage, rejection: Rejection): Promise<void> {
    const { stream, seq, subject, data } = message;
    const entry: DeadLetter = {
      ...rejection,
      consumer: this.consumer,
      stream,
      streamSeq: seq,
      subject,
      quarantinedAt: new Date().toISOString(),
      payloadBytes: data.length,
      payloadSha256: createHash('sha256').update(data).digest('hex'),
      payloadHead: Buffer.from(data.subarray(0, HEAD_BYTES)).toString('utf8'),
    };
    this.log.warn({ consumer: this.consumer, stream, seq, subject, reason: rejection.reason, detail: rejection.detail }, 'message quarantined');
    try {
      await this.#js.publish(Subjects.deadLetter(this.consumer, seq), JSON.stringify(entry), { msgID: `${this.consumer}-${stream}-${seq}` });
    } catch (err) {
      throw new PlatformError('UNAVAILABLE', 'could not store a dead letter', { cause: err });
    }
  }
}
