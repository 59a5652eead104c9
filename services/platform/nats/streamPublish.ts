import { JetStreamError, type JetStreamClient } from '@nats-io/jetstream';
import { JetStreamClientImpl, jserrors } from '@nats-io/jetstream/internal';
import type { NatsConnectionImpl } from '@nats-io/nats-core/internal';
import { createInbox, NoRespondersError, PermissionViolationError, RequestError, TimeoutError, type Msg, type MsgHdrs } from '@nats-io/transport-node';

/** What JetStream answers a publish it stored (or recognised as a duplicate of one it stored). */
export interface StreamAck {
  readonly seq: number;
  readonly duplicate: boolean;
}

/** A publish acknowledgement as the server sends it: `error` instead of the rest when it refused the message. */
interface AckBody {
  stream?: string;
  seq: number;
  duplicate?: boolean;
  error?: unknown;
}

interface Pending {
  readonly subject: string;
  /** The subscription the answer is to come to. */
  readonly inbox: string;
  readonly resolve: (ack: StreamAck) => void;
  readonly reject: (err: unknown) => void;
  readonly timer: NodeJS.Timeout;
}

export type StreamPublish = (subject: string, payload: Uint8Array, headers: MsgHdrs) => Promise<StreamAck>;

/**
 * `js.publish(subject, payload, { headers })` for a caller that sets every header itself, with the same outcome: the
 * message and headers on the wire, the client's timeout, the acknowledgement, and the errors (a timeout is
 * `TimeoutError`, no JetStream behind the subject `JetStreamNotEnabled`, a refusal the client's own
 * `JetStreamApiError` or subclass, built by its parser; a publish refused for permissions, or waiting when the
 * connection closes, `RequestError`; one on a closed connection `ClosedConnectionError`). What it leaves out is
 * per-message work: `js.publish` copied its options, ran the header builder and a retry loop, and `nc.request` made a
 * request object with a random 22-character token, a timeout promise raced against another and a `TextDecoder` for
 * the answer. Here the answers come to one wildcard subscription (under the connection's inbox prefix, made at the
 * first publish and again after it closes), and each publish waits under a counter in a map, with one timer. That
 * was about a third of an event append's CPU in the bench process (`probe/appendCost.ts`: 24.3 against 16.3 µs,
 * issue 34).
 */
export function streamPublisher(js: JetStreamClient): StreamPublish {
  // Another client (a test's stand-in) publishes as it publishes.
  if (!(js instanceof JetStreamClientImpl)) return (subject, payload, headers) => js.publish(subject, payload, { headers });
  const publisher = new AckInbox(js);
  return (subject, payload, headers) => publisher.publish(subject, payload, headers);
}

class AckInbox {
  readonly #nc: NatsConnectionImpl;
  readonly #timeout: number;
  readonly #pending = new Map<string, Pending>();
  /** The subscription's subject without its final `*`, while it is open. */
  #inbox: string | undefined;
  #next = 0;
  #watchingRefusals = false;

  constructor(readonly js: JetStreamClientImpl) {
    this.#nc = js.nc;
    this.#timeout = js.timeout;
  }

  publish(subject: string, payload: Uint8Array, headers: MsgHdrs): Promise<StreamAck> {
    return new Promise<StreamAck>((resolve, reject) => {
      const token = (this.#next++).toString(36);
      try {
        const inbox = this.#inbox ?? this.#subscribe();
        const timer = setTimeout(() => this.#settle(token, new TimeoutError()), this.#timeout);
        this.#pending.set(token, { subject, inbox, resolve, reject, timer });
        this.#nc.publish(subject, payload, { reply: `${inbox}${token}`, headers });
      } catch (err) {
        // As `nc.request`: a publish refused at once (closed connection, bad subject, too large) rejects with its error.
        if (!this.#settle(token, err)) reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  #subscribe(): string {
    if (!this.#watchingRefusals) this.#watchRefusals();
    const inbox = `${createInbox(this.#nc.options.inboxPrefix)}.`;
    const sub = this.#nc.subscribe(`${inbox}*`, {
      callback: (err, msg) => {
        if (err) return this.#closeWith(inbox, new RequestError(err.message, { cause: err }));
        this.#answer(msg.subject.slice(inbox.length), msg);
      },
    });
    this.#inbox = inbox;
    // Closed with the connection (or by a permission error): what still waits gets no answer here.
    void sub.closed.then(
      (err) => this.#closeWith(inbox, new RequestError('connection closed', err instanceof Error ? { cause: err } : undefined)),
      (err: unknown) => this.#closeWith(inbox, new RequestError('connection closed', { cause: err })),
    );
    return inbox;
  }

  /**
   * A publish the server refused for permissions answers nothing: as `nc.request`'s inbox does, the oldest publish
   * waiting on that subject fails with the refusal (rather than at its timeout).
   */
  #watchRefusals(): void {
    this.#watchingRefusals = true;
    void (async () => {
      for await (const status of this.#nc.status()) {
        if (status.type !== 'error' || !(status.error instanceof PermissionViolationError) || status.error.operation !== 'publish') continue;
        const refused = status.error;
        for (const [token, pending] of this.#pending) {
          if (pending.subject !== refused.subject) continue;
          this.#settle(token, new RequestError(refused.message, { cause: refused }));
          break;
        }
      }
    })();
  }

  /** The subscription on `inbox` is gone: the next publish subscribes again, and what waited on this one fails. */
  #closeWith(inbox: string, err: Error): void {
    if (this.#inbox === inbox) this.#inbox = undefined;
    for (const [token, pending] of [...this.#pending]) if (pending.inbox === inbox) this.#settle(token, err);
  }

  #answer(token: string, msg: Msg): void {
    const pending = this.#pending.get(token);
    if (!pending) return;
    // The server's "no responders" status: nothing stores this subject (JetStream off, or no stream for it).
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      const cause = new NoRespondersError(pending.subject);
      return void this.#settle(token, new jserrors.JetStreamNotEnabled('jetstream is not enabled', { cause: new RequestError(cause.message, { cause }) }));
    }
    let ack: AckBody;
    try {
      ack = msg.json<AckBody>();
      // The client's parser throws what `js.publish` throws for this refusal (by its error code).
      if (ack.error) this.js.parseJsResponse(msg);
      if (ack.stream === '' || ack.error) throw new JetStreamError('invalid ack response');
    } catch (err) {
      return void this.#settle(token, err);
    }
    this.#settle(token, undefined, { seq: ack.seq, duplicate: ack.duplicate ? ack.duplicate : false });
  }

  /** Ends the publish waiting under `token`, if one still does. */
  #settle(token: string, err: unknown, ack?: StreamAck): boolean {
    const pending = this.#pending.get(token);
    if (!pending) return false;
    this.#pending.delete(token);
    clearTimeout(pending.timer);
    if (ack) pending.resolve(ack);
    else pending.reject(err);
    return true;
  }
}
