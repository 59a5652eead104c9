import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { jetstream, jetstreamManager, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { AgentCommand, newNonce } from '../../../schemas/agent/agentCommand.ts';
import type { NodeState } from '../../../schemas/metal/nodeState.ts';
import type { BmcObservation } from '../../../schemas/autonomy/snapshot.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import type { NodeView } from '../../../schemas/metal/views.ts';
import { getBmcConnection, listNodes } from '../../../projections/nodes/queries.ts';
import type { ReadModelReader } from '../../../projections/runtime/readModelReader.ts';
import { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import { KeyedMutex } from '../../platform/commands/keyedMutex.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { LeaseTerm } from '../../platform/lease/leaderLease.ts';
import type { Logger } from '../../platform/logger.ts';
import { exchangeAgentCommand } from '../../agents/agentExchange.ts';
import { startResultWatch } from '../../agents/agentWatches.ts';
import { startControlPlaneResultIntake, type ResultIntake } from '../../agents/resultIntake.ts';
import { CommandBus } from '../../platform/commands/commandBus.ts';
import { countRefusals } from '../../trust/refusals/countRefusals.ts';
import { natsCommandChannel, type CommandChannel } from '../../platform/commands/commandChannel.ts';
import { sendEngineCommand } from '../../platform/processManager/engineCommands.ts';
import type { StreamWatch } from '../../agents/streamWatch.ts';
import type { BmcMonitorConfig } from './bmcMonitorConfig.ts';

/** Nodes at rest: a running workflow talks to the BMC itself and fails on its own if the BMC is gone. */
const probed: ReadonlySet<NodeState> = new Set<NodeState>(['enrolled', 'ready', 'deployed', 'rescue', 'failed']);

/**
 * `bmc-monitor`, the power-state sync of a conductor: every interval each resting node's BMC is asked for its power
 * state through the site agent (`power.get`, a signed result like any other). After `failuresBeforeMaintenance`
 * failed reads in a row the node goes into maintenance (source `bmc`); the first good read clears it. A probe that
 * gets no answer at all (the site agent is down) says nothing about the BMC and changes nothing.
 */
export class BmcMonitor {
  readonly #abort = new AbortController();
  readonly #failures = new Map<string, number>();
  readonly #perNode = new KeyedMutex();
  readonly #repository: AggregateRepository;
  readonly #commands: CommandChannel;
  #results: StreamWatch<StoredMsg> | undefined;
  #intake: ResultIntake | undefined;
  readonly #store: EventStore;
  #jsm: JetStreamManager | undefined;
  #timer: NodeJS.Timeout | undefined;
  #round = 0;
  #running: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    store: EventStore,
    private readonly nodes: ReadModelReader,
    private readonly config: BmcMonitorConfig,
    private readonly log: Logger,
    /** The leader lease it runs under (stamped on its commands). */
    private readonly lease?: LeaseTerm,
  ) {
    this.#repository = new AggregateRepository(store);
    this.#store = store;
    this.#commands = natsCommandChannel(nc);
    // Every probe in flight waits on this one signal.
    setMaxListeners(0, this.#abort.signal);
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
    const tick = () => {
      this.#running = this.round().catch((err: unknown) => this.log.warn({ err }, 'BMC probe round failed'));
      void this.#running.finally(() => {
        if (!this.#abort.signal.aborted) this.#timer = setTimeout(tick, this.config.intervalMs);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#timer);
    await this.#running;
    await this.#results?.stop();
    await this.#intake?.stop();
  }

  /** One pass over the fleet, `concurrency` probes at a time. */
  private async round(): Promise<void> {
    const round = ++this.#round;
    const due: NodeView[] = [];
    let cursor: string | undefined;
    do {
      const page = listNodes(this.nodes.db(), { limit: 500, ...(cursor ? { cursor } : {}) });
      due.push(...page.items.filter((n) => probed.has(n.state)));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const queue = [...due];
    const worker = async () => {
      for (let node = queue.shift(); node && !this.#abort.signal.aborted; node = queue.shift()) await this.probe(node, round);
    };
    await Promise.all(Array.from({ length: this.config.concurrency }, worker));
  }

  private async probe(node: NodeView, round: number): Promise<void> {
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
    let outcome: { ok: true } | { ok: false; detail: string };
    try {
      const deps = { js: jetstream(this.nc), jsm: this.#jsm!, repository: this.#repository, results: this.#results!, recheckMs: this.config.probeTimeoutMs };
      const result = await exchangeAgentCommand(deps, command, { deadlineMs: now + this.config.probeTimeoutMs, signal: this.#abort.signal });
      outcome = result.ok ? { ok: true } : { ok: false, detail: `${result.errorCode} ${result.errorMessage}`.trim() };
    } catch (err) {
      if (!this.#abort.signal.aborted) this.log.debug({ err, nodeId: node.nodeId }, 'BMC probe got no verified answer; nothing concluded');
      return;
    }
    await this.#perNode.run(node.nodeId, () => this.record(node, outcome));
  }

  private async record(node: NodeView, outcome: { ok: true } | { ok: false; detail: string }): Promise<void> {
    const before = this.#failures.get(node.nodeId);
    const failures = outcome.ok ? 0 : (before ?? 0) + 1;
    this.#failures.set(node.nodeId, failures);
    if (this.config.mode === 'sensor') {
      // A sensor's input, not a decision: published only when the count moves, so a steady fleet publishes nothing.
      if (before === failures) return;
      const observation: BmcObservation = {
        nodeId: node.nodeId,
        siteId: node.siteId,
        consecutiveFailures: failures,
        lastError: outcome.ok ? null : outcome.detail.slice(0, 300),
        at: new Date().toISOString(),
      };
      await jetstream(this.nc).publish(Subjects.bmcObservation(node.nodeId), JSON.stringify(observation));
      return;
    }
    const lost = !outcome.ok && failures >= this.config.failuresBeforeMaintenance;
    const recovered = outcome.ok && node.maintenance && node.maintenanceSource === 'bmc';
    if (!lost && !recovered) return;
    if (lost && node.maintenance) return;
    const payload = { nodeId: node.nodeId, reachable: outcome.ok, ...(outcome.ok ? {} : { detail: outcome.detail.slice(0, 400) }) };
    if (lost) this.log.warn({ nodeId: node.nodeId, failures, detail: payload.detail }, 'BMC lost: node goes into maintenance');
    else this.log.info({ nodeId: node.nodeId }, 'BMC answers again: maintenance it caused is cleared');
    const commandId = `bmch-${createHash('sha256').update(`${node.nodeId}/${Date.now()}`).digest('hex').slice(0, 32)}`;
    await sendEngineCommand(this.#commands, this.log, this.#abort.signal, 'metal.reportBmcHealth', payload, commandId, this.lease ? { lease: this.lease } : {});
  }
}
