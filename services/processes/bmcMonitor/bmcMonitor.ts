import { setMaxListeners } from 'node:events';
import { jetstream, jetstreamManager, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { AgentCommand, newNonce } from '../../../schemas/agent/agentCommand.ts';
import type { NodeView } from '../../../schemas/metal/views.ts';
import { getBmcConnection, listNodes } from '../../../projections/nodes/queries.ts';
import type { ReadModelReader } from '../../../projections/runtime/readModelReader.ts';
import { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { LeaseTerm } from '../../platform/lease/leaderLease.ts';
import type { Logger } from '../../platform/logger.ts';
import { exchangeAgentCommand } from '../../agents/agentExchange.ts';
import { startResultWatch } from '../../agents/agentWatches.ts';
import { startControlPlaneResultIntake, type ResultIntake } from '../../agents/resultIntake.ts';
import { CommandBus } from '../../platform/commands/commandBus.ts';
import { countRefusals } from '../../trust/refusals/countRefusals.ts';
import type { ProcessManager } from '../../platform/processManager/processManager.ts';
import { ProcessManagerHost } from '../../platform/processManager/processManagerHost.ts';
import type { StreamWatch } from '../../agents/streamWatch.ts';
import type { BmcMonitorConfig } from './bmcMonitorConfig.ts';
import { bmcMonitorModel, decideBmcMonitor, evolveBmcMonitor, probedStates, type BmcMonitorModel, type BmcReading, type PowerProbe } from './bmcMonitoring.ts';

/**
 * `bmc-monitor`, the power-state sync of a conductor: every interval each resting node's BMC is asked for its power
 * state through the site agent (`power.get`, a signed result like any other). After `failuresBeforeMaintenance`
 * failed reads in a row the node goes into maintenance (source `bmc`); the first good read clears it. A probe that
 * gets no answer at all (the site agent is down) says nothing about the BMC and changes nothing.
 *
 * A process manager of ticks and observations on the one `ProcessManagerHost` (`decideBmcMonitor`): a tick probes
 * the resting nodes, `concurrency` at a time; each verified answer is observed, counted and decided on.
 */
export class BmcMonitor {
  readonly #abort = new AbortController();
  readonly #repository: AggregateRepository;
  readonly #host: ProcessManagerHost<never, BmcMonitorModel, PowerProbe, BmcReading>;
  #results: StreamWatch<StoredMsg> | undefined;
  #intake: ResultIntake | undefined;
  readonly #store: EventStore;
  #jsm: JetStreamManager | undefined;

  constructor(
    private readonly nc: NatsConnection,
    store: EventStore,
    private readonly nodes: ReadModelReader,
    private readonly config: BmcMonitorConfig,
    private readonly log: Logger,
    /** The leader lease it runs under (stamped on its commands). */
    lease?: LeaseTerm,
  ) {
    this.#repository = new AggregateRepository(store);
    this.#store = store;
    // Every probe in flight waits on this one signal.
    setMaxListeners(0, this.#abort.signal);
    const monitoring: ProcessManager<never, BmcMonitorModel, PowerProbe, BmcReading> = {
      durable: 'bmc-monitor',
      maxInFlight: config.concurrency,
      tickMs: config.intervalMs,
      model: bmcMonitorModel({ mode: config.mode, failuresBeforeMaintenance: config.failuresBeforeMaintenance }),
      evolve: (model, input) => {
        if (input.type === 'tick') model.resting = this.restingNodes();
        evolveBmcMonitor(model, input);
      },
      decide: (input, model) => {
        const reactions = decideBmcMonitor(input, model);
        if (input.type === 'observed') this.logDecision(input.observation, reactions.length > 0, model);
        return reactions;
      },
      perform: async (probe) => {
        const reading = await this.probe(probe);
        if (reading) this.#host.observe(reading);
        return [];
      },
    };
    this.#host = new ProcessManagerHost(nc, store, monitoring, log, lease);
  }

  async start(): Promise<void> {
    this.#jsm = await jetstreamManager(this.nc);
    this.#results = await startResultWatch(this.nc, this.log);
    // A replica of the result intake (queue group with the executors'): its probes' answers are stored even while no
    // executor runs.
    this.#intake = await startControlPlaneResultIntake(this.nc, {
      repository: this.#repository,
      bus: new CommandBus(this.#store, [countRefusals], { retries: 5 }),
      log: this.log,
    });
    await this.#host.start();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#host.stop();
    await this.#results?.stop();
    await this.#intake?.stop();
  }

  private restingNodes(): NodeView[] {
    const due: NodeView[] = [];
    let cursor: string | undefined;
    do {
      const page = listNodes(this.nodes.db(), { limit: 500, ...(cursor ? { cursor } : {}) });
      due.push(...page.items.filter((n) => probedStates.has(n.state)));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return due;
  }

  /** The `power.get` exchange; no reading when no verified answer came (or the monitor stops). */
  private async probe({ node, round }: PowerProbe): Promise<BmcReading | undefined> {
    const now = Date.now();
    const command = AgentCommand.parse({
      commandId: `bmc-${node.nodeId}-${now.toString(36)}-r${round}`,
      kind: 'power.get',
      siteId: node.siteId,
      nodeId: node.nodeId,
      workflowId: 'bmc-monitor',
      stepIndex: 0,
      attempt: round,
      destructive: false,
      params: {},
      // With the node's enrolled auth and TLS options: the probe must reach the BMC the way its workflows do.
      bmc: getBmcConnection(this.nodes.db(), node.nodeId) ?? { address: node.bmcAddress, credentialsRef: node.bmcCredentialsRef },
      issuedAt: new Date(now).toISOString(),
      notAfter: new Date(now + this.config.probeTimeoutMs).toISOString(),
      nonce: newNonce(),
    });
    try {
      const deps = { js: jetstream(this.nc), jsm: this.#jsm!, repository: this.#repository, results: this.#results!, recheckMs: this.config.probeTimeoutMs };
      const result = await exchangeAgentCommand(deps, command, { deadlineMs: now + this.config.probeTimeoutMs, signal: this.#abort.signal });
      const outcome = result.ok ? ({ ok: true } as const) : ({ ok: false, detail: `${result.errorCode} ${result.errorMessage}`.trim() } as const);
      return { node, probeId: command.commandId, outcome, at: Date.now() };
    } catch (err) {
      if (!this.#abort.signal.aborted) this.log.debug({ err, nodeId: node.nodeId }, 'BMC probe got no verified answer; nothing concluded');
      return undefined;
    }
  }

  private logDecision({ node, outcome }: BmcReading, acted: boolean, model: BmcMonitorModel): void {
    if (!acted || this.config.mode !== 'direct') return;
    if (outcome.ok) this.log.info({ nodeId: node.nodeId }, 'BMC answers again: maintenance it caused is cleared');
    else this.log.warn({ nodeId: node.nodeId, failures: model.failures.get(node.nodeId), detail: outcome.detail }, 'BMC lost: node goes into maintenance');
  }
}
