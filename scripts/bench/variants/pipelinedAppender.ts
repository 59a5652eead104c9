import { createInbox, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { EventBatch } from '../../../schemas/envelope.ts';
import type { AppendResult, EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import { ConcurrencyError } from '../../../services/platform/errors.ts';

const WRONG_LAST_SEQUENCE = 10071;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Pending {
  subject: string;
  expectedSeq: number;
  resolve: (r: AppendResult) => void;
  reject: (e: Error) => void;
  sentAt: number;
}

/**
 * Bench stand-in for a proposed `EventStore.append`: the same message, headers and error mapping, but sent as a core
 * publish whose reply subject sits under one wildcard inbox subscription, instead of `js.publish` (one `request()`
 * each: its own mux entry, timer, promise and, with async traces on, Error objects built for every call). Pending
 * appends time out after `timeoutMs` from a 1 s sweep.
 */
export class PipelinedAppender {
  readonly #inbox = createInbox();
  readonly #pending = new Map<number, Pending>();
  readonly #sweep: NodeJS.Timeout;
  #next = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs = 5_000,
  ) {
    nc.subscribe(`${this.#inbox}.*`, { callback: (err, msg) => this.#settle(err, msg) });
    this.#sweep = setInterval(() => {
      const now = Date.now();
      for (const [id, p] of this.#pending) {
        if (now - p.sentAt < this.timeoutMs) continue;
        this.#pending.delete(id);
        p.reject(new PlatformError('UNAVAILABLE', 'event store append timed out'));
      }
    }, 1_000);
    this.#sweep.unref();
  }

  append(subject: string, batch: EventBatch, options: { expectedSeq: number; msgId: string }): Promise<AppendResult> {
    const id = this.#next++;
    const h = headers();
    h.set('Nats-Msg-Id', options.msgId);
    h.set('Nats-Expected-Last-Subject-Sequence', String(options.expectedSeq));
    return new Promise<AppendResult>((resolve, reject) => {
      this.#pending.set(id, { subject, expectedSeq: options.expectedSeq, resolve, reject, sentAt: Date.now() });
      this.nc.publish(subject, encoder.encode(JSON.stringify(batch)), { reply: `${this.#inbox}.${id}`, headers: h });
    });
  }

  close(): void {
    clearInterval(this.#sweep);
  }

  #settle(err: Error | null, msg: Msg): void {
    const id = Number(msg.subject.slice(this.#inbox.length + 1));
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    if (err) return p.reject(new PlatformError('UNAVAILABLE', 'event store append failed', { cause: err }));
    const ack = JSON.parse(decoder.decode(msg.data)) as { seq?: number; duplicate?: boolean; error?: { err_code?: number; description?: string } };
    if (ack.error) {
      const cause = new Error(ack.error.description ?? 'append rejected');
      return p.reject(
        ack.error.err_code === WRONG_LAST_SEQUENCE
          ? new ConcurrencyError(p.subject, p.expectedSeq, { cause })
          : new PlatformError('UNAVAILABLE', 'event store append failed', { cause }),
      );
    }
    if (ack.seq === undefined) return p.reject(new PlatformError('UNAVAILABLE', `invalid ack: ${decoder.decode(msg.data)}`));
    p.resolve({ seq: ack.seq, duplicate: ack.duplicate ?? false });
  }
}

/** `store` with `append` going through a `PipelinedAppender` on the store's own connection (the rest unchanged). */
export function withPipelinedAppend(store: EventStore): EventStore {
  const appender = new PipelinedAppender(store.nc);
  const wrapped = Object.create(store) as EventStore;
  Object.assign(wrapped, { append: appender.append.bind(appender) });
  return wrapped;
}
