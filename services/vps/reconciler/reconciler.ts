import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { vpsEvents, type VpsEvent } from '../../../schemas/vps/events.ts';
import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { Streams } from '../../../schemas/subjects.ts';
import { ProviderError, type ProviderDefinition } from '../../../plugins/sdk/provider.ts';
import { KeyedMutex } from '../../platform/commands/keyedMutex.ts';
import { DeadLetterQueue } from '../../platform/deadLetters/deadLetterQueue.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import { knownEvents } from '../../platform/eventStore/knownEvents.ts';
import type { LeaseTerm } from '../../platform/lease/leaderLease.ts';
import type { Logger } from '../../platform/logger.ts';
import type { MasterKey } from '../../secrets/masterKey.ts';
import { ConcurrencyLimit } from './concurrencyLimit.ts';
import type { ReconcilerConfig } from './config.ts';
import { converge, type ConvergeEffects } from './converge.ts';
import { engineEffects } from './effects.ts';
import { instanceKey, isAtRest, VpsModel } from './model.ts';
import { ProviderClients } from './providerClients.ts';

export const VPS_RECONCILER_DURABLE = 'vps_reconciler';
export const VPS_EVENTS_FILTER = 'bc.evt.vps.>';
/** A crashed reconciler's unacked events return after this; heartbeats keep a slow provider call's event. */
const ACK_WAIT_MS = 30_000;
const MAX_IN_FLIGHT = 512;

const catalog = new EventCatalog(vpsEvents);

export interface VpsReconcilerOptions {
  readonly providers: ReadonlyMap<string, ProviderDefinition<string, unknown>>;
  readonly masterKey: MasterKey;
  /** Default the global fetch; tests inject faults here. */
  readonly fetch?: typeof fetch;
  /** The leader lease it runs under (stamped on its commands). */
  readonly lease?: LeaseTerm;
}

/**
 * `vps-reconciler`: one durable consumer on `bc.evt.vps.>` folds the VPS events into a model in log order and, after
 * each event and every `resyncMs` for instances not yet where their tenant wants them, converges each affected
 * instance through its account's provider client. Passes of one instance are serialised; different instances run
 * concurrently up to `concurrency` provider calls. An event is acked once its passes are done; a pass the provider
 * could not serve (transient) is retried with backoff by the resync instead of holding the event. A message the
 * event store did not write, or cannot be read, is dead-lettered and acked without folding or reacting.
 */
export class VpsReconciler {
  readonly model = new VpsModel();
  readonly #abort = new AbortController();
  #fail: (err: Error) => void = () => undefined;
  /** Resolves if the event loop ends without a stop: the process must then exit so its supervisor restarts it. */
  readonly failure = new Promise<Error>((resolve) => (this.#fail = resolve));
  readonly #deadLetters: DeadLetterQueue;
  readonly #passes = new KeyedMutex();
  readonly #limit: ConcurrencyLimit;
  readonly #effects: ConvergeEffects;
  /** Instances with a resync pass queued or running: the next resync adds none behind it. */
  readonly #queued = new Set<string>();
  /** Backoff after transient failures: failures so far and when to try again. */
  readonly #retry = new Map<string, { failures: number; at: number }>();
  #appliedSeq = 0;
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;
  #resync: NodeJS.Timeout | undefined;

  constructor(
    nc: NatsConnection,
    private readonly store: EventStore,
    private readonly config: ReconcilerConfig,
    private readonly log: Logger,
    options: VpsReconcilerOptions,
  ) {
    this.#limit = new ConcurrencyLimit(config.concurrency);
    const clients = new ProviderClients(store, options.masterKey, options.providers, { fetch: options.fetch ?? globalThis.fetch, signal: this.#abort.signal });
    this.#effects = engineEffects(nc, log, this.#abort.signal, this.model, clients, options.lease);
    this.#deadLetters = new DeadLetterQueue(nc, VPS_RECONCILER_DURABLE, log);
  }

  async start(): Promise<void> {
    const jsm = this.store.jsm;
    const config = { ack_wait: ACK_WAIT_MS * 1_000_000, max_ack_pending: MAX_IN_FLIGHT };
    let info = await jsm.consumers.info(Streams.events.name, VPS_RECONCILER_DURABLE).catch(() => undefined);
    if (!info) {
      info = await jsm.consumers.add(Streams.events.name, {
        durable_name: VPS_RECONCILER_DURABLE,
        filter_subject: VPS_EVENTS_FILTER,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...config,
      });
    }
    // 2.9 may silently drop a filter it does not understand; a reconciler fed the whole stream would still work, but slowly.
    if (info.config.filter_subject !== VPS_EVENTS_FILTER)
      throw new Error(`consumer ${VPS_RECONCILER_DURABLE} has filter ${info.config.filter_subject ?? '(none)'}`);
    // What was delivered before is folded without reacting; the unacked part comes back and reacts then, and the
    // first resync looks at every instance not at rest, which covers work a crash interrupted.
    await this.foldUpTo(info.delivered.stream_seq);
    const consumer = await this.store.js.consumers.get(Streams.events.name, VPS_RECONCILER_DURABLE);
    // A durable deleted under us ends the loop (the process restarts and recreates it) instead of waiting forever.
    this.#messages = await consumer.consume({ max_messages: MAX_IN_FLIGHT, abort_on_missing_resource: true });
    const messages = this.#messages;
    this.#loop = (async () => {
      for await (const msg of messages) this.receive(msg);
      throw new Error('the event consumer ended');
    })().catch((err: unknown) => {
      if (this.#abort.signal.aborted) return;
      this.log.error({ err }, 'vps reconciler loop ended');
      this.#fail(err instanceof Error ? err : new Error(String(err)));
    });
    this.resync();
    this.#resync = setInterval(() => this.resync(), this.config.resyncMs);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#resync);
    await this.#messages?.close().catch(() => undefined);
    await this.#loop;
    await this.#passes.idle();
  }

  private receive(msg: JsMsg): void {
    const read = knownEvents(this.store.decode(msg), catalog);
    if (read.rejection) {
      this.#appliedSeq = Math.max(this.#appliedSeq, msg.seq);
      this.#deadLetters.setAside(msg, read.rejection);
      return;
    }
    const events = read.events.map((e) => e.event);
    const keys = new Set<string>();
    for (const event of events) {
      const key = msg.seq > this.#appliedSeq ? this.model.apply(event) : this.model.instances.has(keyOf(event)) ? keyOf(event) : undefined;
      // Only a tenant's intent calls for a pass: observations and quota marks are this reconciler's own reports,
      // already in the model, and the resync follows whatever is still moving.
      if (key && (event.type === 'InstanceRequested' || event.type === 'InstanceDesiredStateSet')) keys.add(key);
    }
    this.#appliedSeq = Math.max(this.#appliedSeq, msg.seq);
    const heartbeat = setInterval(() => msg.working(), ACK_WAIT_MS / 3);
    void Promise.all([...keys].map((key) => this.pass(key)))
      .then(
        () => msg.ack(),
        (err: unknown) => {
          if (this.#abort.signal.aborted) return msg.nak();
          this.log.error({ err, seq: msg.seq }, 'vps reconciler could not react to an event');
          msg.nak(1_000);
        },
      )
      .finally(() => clearInterval(heartbeat));
  }

  /** Queues a pass for the instance behind its earlier ones; a transient provider failure schedules a retry instead of failing. */
  private pass(key: string): Promise<void> {
    const instance = this.model.instances.get(key);
    if (!instance || !this.model.accountOf(instance)) return Promise.resolve();
    return this.#passes.run(key, async () => {
      try {
        await this.#limit.run(() => {
          // A pass that waited for a slot past a stop sends nothing.
          this.#abort.signal.throwIfAborted();
          return converge(instance, this.#effects);
        });
        this.#retry.delete(key);
      } catch (err) {
        this.#abort.signal.throwIfAborted();
        if (!(err instanceof ProviderError) || err.kind !== 'transient') throw err;
        const failures = (this.#retry.get(key)?.failures ?? 0) + 1;
        const delay = Math.min(this.config.backoffMs * 2 ** (failures - 1), this.config.maxBackoffMs);
        this.#retry.set(key, { failures, at: Date.now() + delay });
        this.log.warn(
          { instanceId: instance.instanceId, tenantId: instance.tenantId, failures, retryInMs: delay, detail: err.message },
          'provider unavailable; retrying later',
        );
      }
    });
  }

  /** Looks again at every provider instance not at rest, and at those whose backoff is over. */
  private resync(): void {
    const now = Date.now();
    for (const [key, instance] of this.model.instances) {
      if (this.#queued.has(key)) continue;
      const retry = this.#retry.get(key);
      if (retry ? retry.at > now : isAtRest(instance)) continue;
      this.#queued.add(key);
      void this.pass(key)
        .catch((err: unknown) => {
          if (!this.#abort.signal.aborted) this.log.error({ err, instanceId: instance.instanceId }, 'vps reconciler pass failed');
        })
        .finally(() => this.#queued.delete(key));
    }
  }

  private async foldUpTo(seq: number): Promise<void> {
    if (seq === 0) return;
    const consumer = await this.store.js.consumers.get(Streams.events.name, { filter_subjects: VPS_EVENTS_FILTER, deliver_policy: DeliverPolicy.All });
    const messages = await consumer.consume({ max_messages: 5_000 });
    try {
      for await (const m of messages) {
        if (m.seq <= seq) for (const { event } of knownEvents(this.store.decode(m), catalog).events ?? []) this.model.apply(event);
        this.#appliedSeq = Math.min(m.seq, seq);
        if (m.seq >= seq || m.info.pending === 0) break;
      }
    } finally {
      await messages.close();
    }
  }
}

/** The instance an event names, for a redelivered event the model already holds. */
function keyOf(event: VpsEvent): string {
  const data = event.data as { tenantId?: unknown; instanceId?: unknown };
  return instanceKey(String(data.tenantId), String(data.instanceId));
}
