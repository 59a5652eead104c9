import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { AgentDurables, Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { startCommandConsumer } from './commandConsumer.ts';
import { commandHeartbeats } from './commandHeartbeats.ts';
import { runCommand, type AgentExecutor } from './commandRunner.ts';
import { loadOrCreateIdentity } from './identity.ts';
import { CommandJournal, type JournalOptions } from './journal.ts';
import { registerAgent, registrationOf } from './registration.ts';
import { ResultPublisher } from './resultPublisher.ts';

/** A running agent inside a machine: the ramdisk of one boot, or the node agent of an installed OS. */
export interface MachineAgent {
  readonly agentId: string;
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
  /** How often it says it is alive while a command runs (default 10 s). */
  readonly heartbeatIntervalMs?: number;
  /** Set when the agent joined (now or on an earlier boot): the control plane registered its key and made its durable. */
  readonly joined?: { durable: string } | undefined;
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
  const identity = loadOrCreateIdentity(spec.stateDir);
  const agentId = spec.agentIdOf(identity.keyId);
  const journal = new CommandJournal(spec.stateDir, spec.journal);
  const results = new ResultPublisher(jetstream(nc), await jetstreamManager(nc, { checkAPI: false }), identity, agentId);
  const heartbeats = commandHeartbeats(nc, { agentId, identity }, spec.heartbeatIntervalMs);
  const consumer = await startCommandConsumer(nc, {
    durable: spec.joined?.durable ?? AgentDurables.node(agentId),
    deliver: 'new',
    durableExists: spec.joined !== undefined,
    filterSubject: Subjects.nodeAgentCommands(siteId, nodeId),
    ackWaitMs: spec.ackWaitMs ?? 30_000,
    serialiseBy: () => nodeId,
    handle: (data, ctx) => runCommand(data, ctx, { agentId, journal, results, executor, log, heartbeats }),
    log,
  });
  const stopRegistering = new AbortController();
  const registered = spec.joined
    ? Promise.resolve()
    : registerAgent(nc, registrationOf(identity, { agentId, role, siteId, nodeId }), log, stopRegistering.signal);
  registered.catch((err: unknown) => log.error({ err, agentId }, 'agent registration refused'));
  log.info({ agentId, nodeId, role }, `${role} agent started`);
  return {
    agentId,
    keyId: identity.keyId,
    publicKey: identity.publicKeyBase64,
    registered,
    idle: () => consumer.idle(),
    stop: async () => {
      stopRegistering.abort();
      await consumer.stop();
      journal.close();
    },
  };
}
