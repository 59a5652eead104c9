import { setTimeout as sleep } from 'node:timers/promises';
import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../platform/logger.ts';
import { closeWhenSilent } from '../platform/nats/silentConsumer.ts';

export interface StreamWatchOptions<V> {
  stream: string;
  filter: string;
  /** Where the watch starts: only messages stored from now on, or from a past time (to index recent history). */
  from: 'new' | Date;
  /** The keyed values one message carries (none for messages the watch does not care about). */
  extract(msg: JsMsg): Iterable<readonly [string, V]>;
  /** Keys remembered at most (oldest forgotten first): a long-lived process must not grow without bound. */
  maxKeys?: number;
  /** A consumer younger than this is not reopened on a waiter's request (10 s by default). */
  reopenAfterMs?: number;
  log: Logger;
}

/** A pull that sees no message and no heartbeat this long is reopened (ordered consumers are ephemeral). */
const PULL_EXPIRES_MS = 5_000;

/**
 * One ordered consumer per process over a stream filter, keeping the latest value per key and waking whoever waits
 * for a key. It replaces per-attempt polling and per-attempt consumers: a thousand waiting steps cost one consumer.
 * The consumer is ephemeral and dies with a server restart, so the watch reopens it from the last sequence it saw
 * after every reconnect or broken pull: nothing stored while the process lives is missed. What happened before it
 * started is the caller's to look up (one direct get).
 */
export class StreamWatch<V> {
  readonly #latest = new Map<string, V>();
  readonly #waiters = new Map<string, Set<(value: V) => void>>();
  #nextSeq = 0;
  #openedAt = 0;
  #stopped = false;
  #messages: ConsumerMessages | undefined;
  #sessions: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: StreamWatchOptions<V>,
  ) {}

  /** Resolves once the first consumer is open: from then on nothing stored is missed. */
  async start(): Promise<void> {
    if (this.options.from === 'new') {
      const info = await (await jetstreamManager(this.nc)).streams.info(this.options.stream);
      this.#nextSeq = info.state.last_seq + 1;
    }
    const first = await this.#open();
    this.#sessions = this.#run(first);
    void (async () => {
      for await (const status of this.nc.status()) {
        if (this.#stopped) break;
        if (status.type === 'reconnect') await this.#messages?.close().catch(() => undefined);
      }
    })();
  }

  /**
   * Reopens the consumer at the sequence after the last one seen, at most once per `reopenAfterMs`: for a waiter
   * that waited long without news, in case the ordered consumer stalled without an error (nothing stored is read twice
   * or missed either way).
   */
  reopen(): void {
    if (Date.now() - this.#openedAt < (this.options.reopenAfterMs ?? 10_000)) return;
    this.#openedAt = Date.now();
    void this.#messages?.close().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#messages?.close().catch(() => undefined);
    await this.#sessions;
  }

  /**
   * Resolves the next value for `key` that satisfies `accept` (the latest one already seen counts), or undefined
   * after `timeoutMs` so the caller can look elsewhere. Rejects when `signal` aborts.
   */
  next(key: string, accept: (value: V) => boolean, timeoutMs: number, signal: AbortSignal): Promise<V | undefined> {
    const seen = this.#latest.get(key);
    if (seen !== undefined && accept(seen)) return Promise.resolve(seen);
    return new Promise<V | undefined>((resolve, reject) => {
      const waiters = this.#waiters.get(key) ?? new Set();
      this.#waiters.set(key, waiters);
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        waiters.delete(waiter);
        if (waiters.size === 0 && this.#waiters.get(key) === waiters) this.#waiters.delete(key);
      };
      const waiter = (value: V) => {
        if (!accept(value)) return;
        done();
        resolve(value);
      };
      const onAbort = () => {
        done();
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const timer = setTimeout(() => {
        done();
        resolve(undefined);
      }, timeoutMs);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      waiters.add(waiter);
    });
  }

  async #open(): Promise<ConsumerMessages> {
    const { stream, filter, from } = this.options;
    const start =
      this.#nextSeq > 0
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.#nextSeq }
        : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: (from as Date).toISOString() };
    const consumer = await jetstream(this.nc).consumers.get(stream, { filter_subjects: filter, ...start });
    const messages = await consumer.consume({ max_messages: 1_000, expires: PULL_EXPIRES_MS });
    this.#messages = messages;
    this.#openedAt = Date.now();
    void closeWhenSilent(messages, (missed) => this.options.log.warn({ stream, missed }, 'watch consumer silent; reopening'));
    return messages;
  }

  /** Drains one consumer after another until stopped; each picks up at the sequence after the last one seen. */
  async #run(first: ConsumerMessages): Promise<void> {
    let messages: ConsumerMessages | undefined = first;
    while (!this.#stopped) {
      try {
        messages ??= await this.#open();
        for await (const msg of messages) this.#receive(msg);
      } catch (err) {
        if (!this.#stopped) this.options.log.warn({ err, stream: this.options.stream }, 'watch consumer failed; reopening');
      }
      messages = undefined;
      if (!this.#stopped) await sleep(250);
    }
  }

  #receive(msg: JsMsg): void {
    this.#nextSeq = msg.seq + 1;
    try {
      for (const [key, value] of this.options.extract(msg)) this.#publish(key, value);
    } catch (err) {
      this.options.log.warn({ err, subject: msg.subject }, 'watch ignored a message it could not read');
    }
  }

  #publish(key: string, value: V): void {
    this.#latest.delete(key);
    this.#latest.set(key, value);
    if (this.#latest.size > (this.options.maxKeys ?? 100_000)) this.#latest.delete(this.#latest.keys().next().value!);
    for (const waiter of [...(this.#waiters.get(key) ?? [])]) waiter(value);
  }
}
