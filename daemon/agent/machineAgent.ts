import type { BcxDriverAdvert } from '../../schemas/bcx/bcxProtocol.ts';
import type { HostModuleReport } from '../../schemas/agent/hostModules.ts';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { AgentDurables, Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { startCommandConsumer } from './commandConsumer.ts';
import { commandHeartbeats } from './commandHeartbeats.ts';
import { lastErrorOf, readLastError } from './lastError.ts';
import { startPresenceHeartbeats } from './presenceHeartbeats.ts';
import { NodeLogPublisher } from './nodeLogPublisher.ts';
import { runCommand, type AgentExecutor } from './commandRunner.ts';
import { AgentKeyring } from './agentKeyring.ts';
import { loadOrCreateIdentity } from './identity.ts';
import type { KeyRotationDeps } from './keyRotation.ts';
import { resumePendingRotation, watchKeyRotation } from './keyRotationWatch.ts';
import { SigningGate } from './signingGate.ts';
import { CommandJournal, type JournalOptions } from './journal.ts';
import { registerAgent, registrationOf } from './registration.ts';
import { ResultPublisher } from './resultPublisher.ts';

/** A running agent inside a machine: the ramdisk of one boot, or the node agent of an installed OS. */
export interface MachineAgent {
  readonly agentId: string;
  /** The key it signs with now (a node agent's rotation changes it). */
  readonly keyId: string;
  readonly publicKey: string;
  readonly registered: Promise<void>;
  idle(): Promise<void>;
  /** Power lost, reboot or shutdown: running work is abandoned unacked (its journal says `started`). */
  stop(): Promise<void>;
}

export interface MachineAgentSpec {
  readonly role: 'ramdisk' | 'node';
  readonly siteId: string;
  readonly nodeId: string;
  /** The agent's key and journal live here. */
  readonly stateDir: string;
  /** The agent id, from the identity's key id (a ramdisk's changes every boot, a node agent's does not). */
  agentIdOf(keyId: string): string;
  readonly journal?: JournalOptions;
  readonly executor: AgentExecutor;
  readonly ackWaitMs?: number;
  /** How often it says it is alive, and still working while a command runs (default 10 s each). */
  readonly heartbeatIntervalMs?: number;
  /** Set when the agent joined (now or on an earlier boot): the control plane registered its key and made its durable. */
  readonly joined?: { durable: string } | undefined;
  /**
   * A node agent's key outlives boots, so it rotates when the control plane asks (`keyRotationWatch.ts`): how often it
   * asks, and in broker mode the user key of its credentials. A ramdisk's key lives for one boot: it never rotates.
   */
  readonly keyRotation?: { readonly intervalMs?: number; readonly userPublicKey?: string };
  /** The bcx drivers it runs now, advertised in every heartbeat (`bcd node`). */
  readonly drivers?: () => readonly BcxDriverAdvert[];
  /** The modules installed on the host, advertised in every heartbeat (`bcd node`). */
  readonly modules?: () => readonly HostModuleReport[];
  readonly log: Logger;
}

/**
 * What every agent inside a machine does: consumes `bc.site.<siteId>.node.<nodeId>.cmd` through its durable one
 * command at a time, journals and signs results, heartbeats while a command runs, and registers its key unless it
 * joined. The consumer exists before the agent announces itself, so it sees every command sent to this identity and
 * none left over from an earlier one.
 */
export async function startMachineAgent(nc: NatsConnection, spec: MachineAgentSpec): Promise<MachineAgent> {
  const { role, siteId, nodeId, executor, log } = spec;
  const startedAt = new Date();
  let lastError = readLastError(spec.stateDir);
  const identity = new AgentKeyring(loadOrCreateIdentity(spec.stateDir));
  const gate = new SigningGate();
  const agentId = spec.agentIdOf(identity.keyId);
  const journal = new CommandJournal(spec.stateDir, spec.journal);
  const results = new ResultPublisher(jetstream(nc), await jetstreamManager(nc, { checkAPI: false }), identity, agentId, log);
  const heartbeats = commandHeartbeats(nc, { agentId, identity }, spec.heartbeatIntervalMs);
  // The broker lets a ramdisk print only `ramdisk` lines and an installed host only `node-agent` lines, for its node.
  const logs = new NodeLogPublisher((subject, data) => nc.publish(subject, data), siteId, role === 'ramdisk' ? 'ramdisk' : 'node-agent');
  const consumer = await startCommandConsumer(nc, {
    durable: spec.joined?.durable ?? AgentDurables.node(agentId),
    deliver: 'new',
    durableExists: spec.joined !== undefined,
    filterSubject: Subjects.nodeAgentCommands(siteId, nodeId),
    ackWaitMs: spec.ackWaitMs ?? 30_000,
    serialiseBy: () => nodeId,
    handle: (data, ctx) => gate.signing(() => runCommand(data, ctx, { agentId, journal, results, executor, log, heartbeats, logs })),
    log,
  });
  const stopRegistering = new AbortController();
  const userPublicKey = spec.keyRotation?.userPublicKey;
  const rotation: KeyRotationDeps | undefined =
    role === 'node'
      ? { nc, agent: { agentId, role, siteId, nodeId }, keyring: identity, stateDir: spec.stateDir, log, ...(userPublicKey ? { userPublicKey } : {}) }
      : undefined;
  // A rotation a crash interrupted is settled first: until then the control plane may hold either key.
  const resumed = rotation ? resumePendingRotation(rotation, gate, stopRegistering.signal) : Promise.resolve();
  const registered = spec.joined
    ? resumed
    : resumed.then(() => registerAgent(nc, registrationOf(identity, { agentId, role, siteId, nodeId }), log, stopRegistering.signal));
  const intervalMs = spec.keyRotation?.intervalMs;
  const keyWatch = rotation
    ? watchKeyRotation(rotation, { gate, after: registered, signal: stopRegistering.signal, ...(intervalMs ? { intervalMs } : {}) })
    : undefined;
  registered.catch((err: unknown) => {
    lastError = lastErrorOf(err);
    log.error({ err, agentId }, 'agent registration refused');
  });
  // From the moment its key is known to the control plane (earlier beats could not verify): alive, command or not.
  let presence: { stop(): void } | undefined;
  let stopped = false;
  void registered.then(
    () => {
      if (stopped) return;
      presence = startPresenceHeartbeats(nc, {
        agentId,
        siteId,
        nodeId,
        identity,
        startedAt,
        lastError: () => lastError,
        ...(spec.drivers ? { drivers: spec.drivers } : {}),
        ...(spec.modules ? { modules: spec.modules } : {}),
        ...(spec.heartbeatIntervalMs ? { intervalMs: spec.heartbeatIntervalMs } : {}),
      });
    },
    () => undefined,
  );
  log.info({ agentId, nodeId, role }, `${role} agent started`);
  return {
    agentId,
    get keyId() {
      return identity.keyId;
    },
    get publicKey() {
      return identity.publicKeyBase64;
    },
    registered,
    idle: () => consumer.idle(),
    stop: async () => {
      stopped = true;
      presence?.stop();
      stopRegistering.abort();
      await consumer.stop();
      logs.close();
      await keyWatch?.done;
      journal.close();
    },
  };
}
