import { setMaxListeners } from 'node:events';
import type { NatsConnection } from '@nats-io/transport-node';
import { Agent } from 'undici';
import { jetstream } from '@nats-io/jetstream';
import type { ReadModelReader } from '../../../projections/runtime/readModelReader.ts';
import { ProviderError, type ProviderDefinition } from '../../../plugins/sdk/provider.ts';
import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { vpsEvents } from '../../../schemas/vps/events.ts';
import { startAgentPresence, type AgentPresenceView } from '../../agents/agentPresence.ts';
import { sendAgentCommand } from '../../agents/agentExchange.ts';
import { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import { pooledFetch } from '../../platform/http/pooledFetch.ts';
import type { CommandChannel } from '../../platform/commands/commandChannel.ts';
import type { LeaseTerm } from '../../platform/lease/leaderLease.ts';
import type { Logger } from '../../platform/logger.ts';
import type { DefinitionsOf, ProcessManager } from '../../platform/processManager/processManager.ts';
import { ProcessManagerHost } from '../../platform/processManager/processManagerHost.ts';
import { ConcurrencyLimit } from './concurrencyLimit.ts';
import type { ReconcilerConfig } from './config.ts';
import { planPass, probe, type ProviderAccess } from './converge.ts';
import type { ConvergeTask } from './effects.ts';
import type { HostInstancesHeard } from './hostReports.ts';
import { placeEffects, relocateEffects, sendToHost, type MetalAccess } from './metalAccess.ts';
import { planMetalPass } from './metalConverge.ts';
import { isWarmStep, performWarm } from './warmAccess.ts';
import { VpsModel } from './model.ts';
import { ProviderClients, type ProviderTokens } from './providerClients.ts';
import { backoffDelay, decideVps, evolveVps } from './reconciliation.ts';

export const VPS_RECONCILER_DURABLE = 'vps_reconciler';
export const VPS_EVENTS_FILTER = 'bc.evt.vps.>';
/** A crashed reconciler's unacked events return after this; heartbeats keep a slow provider call's event. */
const ACK_WAIT_MS = 30_000;

const catalog = new EventCatalog(vpsEvents);
type VpsDefinitions = DefinitionsOf<typeof catalog>;

export interface VpsReconcilerOptions {
  readonly providers: ReadonlyMap<string, ProviderDefinition<string, unknown>>;
  /** Provider account tokens (sealed secrets the composition root opens). */
  readonly tokens: ProviderTokens;
  /** Default `pooledFetch` on a keep-alive pool of the reconciler's own; tests inject faults here. */
  readonly fetch?: typeof fetch;
  /** The leader lease it runs under (stamped on its commands). */
  readonly lease?: LeaseTerm;
  /** Where its commands go (default: NATS). */
  readonly commands?: CommandChannel;
  /** The nodes read model: metal-pool instances are placed on the site's nodes as it shows them (none: nothing fits). */
  readonly nodes?: ReadModelReader;
  /** A node's agent is alive while its last verified heartbeat is at most this old (`BC_AGENT_PRESENCE_WINDOW_MS`). */
  readonly presenceWindowMs?: number;
}

/**
 * `vps-reconciler`: the process manager of VPS instances (`reconciliation.ts` decides, `converge.ts` plans and
 * probes a pass) on the platform's `ProcessManagerHost` over `bc.evt.vps.>`. Passes of one instance are serialised;
 * different instances run concurrently up to `concurrency` provider calls. An event is acked once its passes are
 * done; a pass the provider could not serve (transient) backs off and is retried by the resync instead of holding
 * the event. A metal pool's instances are placed on the site's book and converged by their host's `bcd node`
 * (`metalConverge.ts`): the heartbeats this process hears, each verified against its node agent's key, are folded as
 * observations, and a host's reports count only for the instances placed on it.
 */
export class VpsReconciler {
  readonly #host: ProcessManagerHost<VpsDefinitions, VpsModel, ConvergeTask, HostInstancesHeard>;
  /** The heartbeats this process hears, each verified against its node agent's key: metal instances' reports. */
  readonly #presence: AgentPresenceView;
  /** Resolves if the event loop ends without a stop: the process must then exit so its supervisor restarts it. */
  readonly failure: Promise<Error>;
  /** Aborts every provider call at stop. */
  readonly #abort = new AbortController();
  /** Keep-alive connections to the providers' APIs, unless a test hands in its own `fetch`. */
  readonly #pool: Agent | undefined;

  constructor(nc: NatsConnection, store: EventStore, config: ReconcilerConfig, log: Logger, options: VpsReconcilerOptions) {
    const limit = new ConcurrencyLimit(config.concurrency);
    const { signal } = this.#abort;
    // Every provider call in flight (up to `concurrency`) listens on this one signal: not a leak, so no warning at 11.
    setMaxListeners(0, signal);
    this.#pool = options.fetch ? undefined : new Agent({ connections: config.concurrency, keepAliveTimeout: 10_000 });
    const fetchImpl = options.fetch ?? pooledFetch(this.#pool!);
    const clients = new ProviderClients(options.tokens, options.providers, { fetch: fetchImpl, signal });
    const model = new VpsModel();
    const access: ProviderAccess = {
      signal,
      async client(instance) {
        const found = model.accountOf(instance);
        if (!found) throw new Error(`pool ${instance.spec.poolId} has no provider account`);
        return clients.clientFor(found.accountId, found.account);
      },
      offerOf: (instance) => model.offerOf(instance),
    };
    const js = jetstream(nc);
    const metal: MetalAccess = {
      nodes: options.nodes,
      // The presence is started once the host exists (below); nothing asks it before the host runs.
      presence: { presenceOf: (nodeId) => this.#presence.presenceOf(nodeId) },
      sendAgentCommand: (command) => sendAgentCommand({ js }, command),
    };
    const reconciliation: ProcessManager<VpsDefinitions, VpsModel, ConvergeTask, HostInstancesHeard> = {
      durable: VPS_RECONCILER_DURABLE,
      filter: VPS_EVENTS_FILTER,
      catalog,
      ackWaitMs: ACK_WAIT_MS,
      maxInFlight: 512,
      tickMs: config.resyncMs,
      model,
      evolve: (m, input) => evolveVps(m, input, config),
      decide: (input, m) => decideVps(input, m, config),
      async perform(task, m, signal) {
        if (isWarmStep(task)) return performWarm(task, m, metal, config);
        const instance = m.instances.get(task.converge);
        if (!instance) return [];
        if (m.metalPoolOf(instance)) {
          if (task.step === 'plan') return planMetalPass(instance, m.hosts, Date.now(), config.hostResendMs, task.polledAt);
          if (task.step === 'place') return placeEffects(instance, m, metal, config.placementWaitMs);
          if (task.step === 'relocate') return relocateEffects(instance, m, metal);
          if (task.step === 'apply' || task.step === 'remove') await sendToHost(instance, m, task.step, metal);
          if (task.step === 'removeCopy' && task.nodeId !== undefined) await sendToHost(instance, m, 'remove', metal, Date.now(), task.nodeId);
          return [];
        }
        if (task.step === 'plan') return planPass(instance, task);
        // A pass that waited for a slot past a stop calls no provider.
        return limit.run(async () => {
          signal.throwIfAborted();
          try {
            return await probe(instance, access);
          } catch (err) {
            if (err instanceof ProviderError && err.kind === 'transient') {
              const failures = (m.retries.get(instance.key)?.failures ?? 0) + 1;
              log.warn(
                { instanceId: instance.instanceId, tenantId: instance.tenantId, failures, retryInMs: backoffDelay(config, failures), detail: err.message },
                'provider unavailable; retrying later',
              );
            }
            throw err;
          }
        });
      },
      absorbs: (error) => error instanceof ProviderError && error.kind === 'transient',
    };
    const host = new ProcessManagerHost(nc, store, reconciliation, log, options.lease, options.commands);
    this.#host = host;
    this.#presence = startAgentPresence(nc, {
      repository: new AggregateRepository(store),
      windowMs: options.presenceWindowMs ?? 60_000,
      log,
      onVerified: (heartbeat, at) => host.observe({ siteId: heartbeat.siteId, nodeId: heartbeat.nodeId, at, instances: heartbeat.instances ?? [] }),
    });
    this.failure = this.#host.failure;
  }

  get model(): VpsModel {
    return this.#host.model;
  }

  start(): Promise<void> {
    return this.#host.start();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#presence.stop();
    await this.#host.stop();
    await this.#pool?.destroy();
  }
}
