import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { PlatformError } from '../../../schemas/platformError.ts';
import { unavailableOnFailure } from '../errors.ts';

/** How long a replay waits for its consumer or its next message before the store counts as unavailable. */
const REPLAY_TIMEOUT_MS = 5_000;
/** The server removes a consumer whose delete was lost after this long without a subscriber. */
const LEFTOVER_CONSUMER_NS = 5_000_000_000;
/** Heartbeats only flow when the replay stalls (nats-server 2.9 needs them for flow control). */
const IDLE_HEARTBEAT_NS = 2_000_000_000;

/** A message as the stream stored it (the event store's `RawLogMessage`). */
export interface ReplayedMessage {
  readonly seq: number;
  readonly subject: string;
  readonly headers: MsgHdrs | undefined;
  readonly data: Uint8Array;
}

/** The JetStream API's answer to a consumer create (only the fields the replay reads). */
interface CreatedConsumer {
  name?: string;
  num_pending?: number;
  delivered?: { consumer_seq?: number };
  config?: { filter_subject?: string };
  error?: { code?: number; err_code?: number; description?: string };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The messages on one subject of `stream` after `afterSeq` (at most `throughSeq`), oldest first, in one request: an
 * ephemeral push consumer filtered on the subject is created with the reply inbox as its deliver subject, and its
 * messages flow back on it without further asks. A direct get per message costs a round trip each; this costs one
 * whatever the subject's length. The consumer reads the store of the server it lands on, so it answers like a replica
 * read (it may lag the leader on a cluster); its delete is sent without waiting, and the server drops a consumer
 * whose delete was lost once nothing listens (`inactive_threshold`).
 */
export async function* replaySubject(
  nc: NatsConnection,
  stream: string,
  subject: string,
  afterSeq: number,
  throughSeq = Infinity,
): AsyncGenerator<ReplayedMessage> {
  // Under the connection's inbox prefix: a user may subscribe to no other inbox (services/trust/broker/permissions.ts).
  const inbox = createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix);
  const queue = new MessageQueue(nc.subscribe(inbox));
  let name: string | undefined;
  try {
    const create = {
      stream_name: stream,
      config: {
        deliver_subject: inbox,
        filter_subject: subject,
        deliver_policy: 'by_start_sequence',
        opt_start_seq: afterSeq + 1,
        ack_policy: 'none',
        replay_policy: 'instant',
        max_deliver: 1,
        mem_storage: true,
        num_replicas: 1,
        flow_control: true,
        idle_heartbeat: IDLE_HEARTBEAT_NS,
        inactive_threshold: LEFTOVER_CONSUMER_NS,
      },
    };
    const answer = await unavailable(nc.request(`$JS.API.CONSUMER.CREATE.${stream}`, encoder.encode(JSON.stringify(create)), { timeout: REPLAY_TIMEOUT_MS }));
    const created = JSON.parse(decoder.decode(answer.data)) as CreatedConsumer;
    if (created.error || !created.name) throw new PlatformError('UNAVAILABLE', `event store replay refused: ${created.error?.description ?? 'no consumer'}`);
    name = created.name;
    // nats-server 2.9 creates a consumer without any filter when it does not take the one asked for (NATS-NOTES.md).
    if (created.config?.filter_subject !== subject) throw new PlatformError('INTERNAL', `event store replay got a consumer not filtered on ${subject}`);
    // Nothing to deliver, and nothing delivered before this answer: the subject holds nothing after `afterSeq`.
    if (created.num_pending === 0 && !created.delivered?.consumer_seq) return;
    for (;;) {
      const msg = await queue.next();
      const seq = Number(msg.tokens[5]);
      if (seq > throughSeq) return;
      yield { seq, subject: msg.msg.subject, headers: msg.msg.headers, data: msg.msg.data };
      // The ack subject's last token: what the consumer still had to deliver after this message.
      if (msg.tokens[8] === '0' || seq === throughSeq) return;
    }
  } finally {
    queue.close();
    if (name) nc.publish(`$JS.API.CONSUMER.DELETE.${stream}.${name}`);
  }
}

/** The consumer's deliveries in arrival order; flow-control asks answered and heartbeats dropped on the way. */
class MessageQueue {
  readonly #waiting: { msg: Msg; tokens: string[] }[] = [];
  #wake: (() => void) | undefined;

  constructor(private readonly sub: Subscription) {
    void this.#pump();
  }

  async #pump(): Promise<void> {
    for await (const msg of this.sub) {
      if (!msg.reply?.startsWith('$JS.ACK.')) {
        // A status message: a flow-control ask carries a reply to answer, a heartbeat none.
        if (msg.headers?.code === 100 && msg.reply) msg.respond();
        continue;
      }
      this.#waiting.push({ msg, tokens: msg.reply.split('.') });
      this.#wake?.();
    }
    this.#wake?.();
  }

  async next(): Promise<{ msg: Msg; tokens: string[] }> {
    for (;;) {
      const head = this.#waiting.shift();
      if (head) return head;
      if (this.sub.isClosed()) throw new PlatformError('UNAVAILABLE', 'event store replay ended early');
      await unavailable(
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no message within ${REPLAY_TIMEOUT_MS} ms`)), REPLAY_TIMEOUT_MS);
          this.#wake = () => {
            clearTimeout(timer);
            this.#wake = undefined;
            resolve();
          };
        }),
      );
    }
  }

  close(): void {
    this.sub.unsubscribe();
  }
}

const unavailable = <T>(operation: Promise<T>): Promise<T> => unavailableOnFailure(operation, 'event store is unavailable');
