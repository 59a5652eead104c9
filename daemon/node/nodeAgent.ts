import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { cpus, hostname, totalmem } from 'node:os';
import { stat } from 'node:fs/promises';
import { AgentCommandKinds } from '../../schemas/agent/agentCommand.ts';
import { AgentDurables, Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../services/platform/errors.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startCommandConsumer } from '../agent/commandConsumer.ts';
import { runCommand, type AgentExecutor } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import { loadOrCreateIdentity } from '../agent/identity.ts';
import { connectJoinedAgent } from '../agent/joinedConnection.ts';
import { CommandJournal } from '../agent/journal.ts';
import { registerAgent, registrationOf } from '../agent/registration.ts';
import { ResultPublisher } from '../agent/resultPublisher.ts';
import { loadNodeMembership, saveNodeMembership } from './nodeMembership.ts';

/** `node-<nodeId>`: one installed OS per node, the id the join service gives a `node` join. */
export const nodeAgentId = (nodeId: string) => `node-${nodeId}`;

/** Kinds a running OS may run on itself. Wiping or imaging the disk it runs from is the ramdisk's work. */
const refusedOnRunningOs: Partial<Record<string, string>> = {
  'disk.wipe': 'a running OS does not wipe its own disks; PXE-boot the ramdisk for disk.wipe',
  'image.write': 'a running OS does not overwrite its own disks; PXE-boot the ramdisk for image.write',
  'userdata.write': 'user data is read at first boot; the ramdisk writes it before the OS runs',
};

/** Runs the non-destructive `node` kinds on an installed host (today `inventory.report`). */
export function nodeExecutor(machine: { siteId: string; nodeId: string; disks: readonly string[] }): AgentExecutor {
  return {
    refuse(command) {
      if (command.siteId !== machine.siteId || command.nodeId !== machine.nodeId) {
        return `command for ${command.siteId}/${command.nodeId} reached the node agent of ${machine.siteId}/${machine.nodeId}`;
      }
      if (AgentCommandKinds[command.kind].runsOn !== 'node') return `${command.kind} runs on the site agent, not inside the machine`;
      return refusedOnRunningOs[command.kind];
    },
    async execute(command) {
      if (command.kind !== 'inventory.report') throw new AgentError('WRONG_AGENT', `${command.kind} does not run on an installed node`);
      return {
        hostname: hostname(),
        cpus: cpus().length,
        memoryMiB: Math.floor(totalmem() / (1 << 20)),
        disks: await Promise.all(machine.disks.map(async (path) => ({ path, sizeBytes: (await stat(path)).size }))),
      };
    },
  };
}

export interface NodeAgentOptions {
  siteId: string;
  nodeId: string;
  /** Kept across reboots: the agent's key, its journal and its membership. */
  stateDir: string;
  /** Disks `inventory.report` sizes (files in simulation). */
  disks?: readonly string[];
  ackWaitMs?: number;
  /** Set when the agent joined (now or on an earlier boot): the control plane registered its key and made its durable. */
  joined?: { durable: string };
  log: Logger;
}

/** A running `bcd node`. */
export interface NodeAgent {
  readonly agentId: string;
  readonly keyId: string;
  readonly publicKey: string;
  readonly registered: Promise<void>;
  idle(): Promise<void>;
  /** Shutdown or power lost: running work is left unacked (its journal says `started`). */
  stop(): Promise<void>;
}

/**
 * `bcd node`: the agent of an installed host. Consumes `bc.site.<siteId>.node.<nodeId>.cmd` through its durable one
 * command at a time and publishes signed results, like the ramdisk, but its identity and journal persist in
 * `stateDir` (fsynced: a host keeps both across power losses) and it refuses to wipe or image its own disks.
 */
export async function startNodeAgent(nc: NatsConnection, options: NodeAgentOptions): Promise<NodeAgent> {
  const { siteId, nodeId, log } = options;
  const identity = loadOrCreateIdentity(options.stateDir);
  const agentId = nodeAgentId(nodeId);
  const journal = new CommandJournal(options.stateDir);
  const results = new ResultPublisher(jetstream(nc), await jetstreamManager(nc, { checkAPI: false }), identity, agentId);
  const executor = nodeExecutor({ siteId, nodeId, disks: options.disks ?? [] });
  const consumer = await startCommandConsumer(nc, {
    durable: options.joined?.durable ?? AgentDurables.node(agentId),
    deliver: 'new',
    durableExists: options.joined !== undefined,
    filterSubject: Subjects.nodeAgentCommands(siteId, nodeId),
    ackWaitMs: options.ackWaitMs ?? 30_000,
    serialiseBy: () => nodeId,
    handle: (data, ctx) => runCommand(data, ctx, { journal, results, executor, log }),
    log,
  });
  const stopRegistering = new AbortController();
  const registered = options.joined
    ? Promise.resolve()
    : registerAgent(nc, registrationOf(identity, { agentId, role: 'node', siteId, nodeId }), identity.keyId, log, stopRegistering.signal);
  registered.catch((err: unknown) => log.error({ err, agentId }, 'agent registration refused'));
  log.info({ agentId, nodeId }, 'node agent started');
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

export interface NodeAgentLaunch {
  siteId: string;
  nodeId: string;
  natsUrl: string;
  stateDir: string;
  /** The single-use join token of the first start; later starts resume the membership kept in `stateDir`. */
  token?: string;
  /** Broker mode: the public join credential (`join.creds` text). */
  joinCreds?: string;
  /** The host's SMBIOS system UUID, for tokens that expect one. */
  productUuid?: string;
  disks?: readonly string[];
  ackWaitMs?: number;
  log: Logger;
}

/**
 * What `bcd node` does at start: join with the token (role `node`) and remember the membership, or, without a token,
 * resume the membership of an earlier start. Without either, it registers itself (no-join mode, like the other
 * agents). Returns the agent and the connection it runs on (the caller closes it after `agent.stop()`).
 */
export async function launchNodeAgent(launch: NodeAgentLaunch): Promise<{ agent: NodeAgent; nc: NatsConnection }> {
  const { siteId, nodeId, stateDir, log } = launch;
  const name = `bcd-node-${nodeId}`;
  const remembered = loadNodeMembership(stateDir);
  let joined: { durable: string } | undefined;
  let nc: NatsConnection;
  if (launch.token) {
    const agent = await connectJoinedAgent({
      natsUrl: launch.natsUrl,
      name,
      role: 'node',
      token: launch.token,
      identity: loadOrCreateIdentity(stateDir),
      siteId,
      nodeId,
      ...(launch.productUuid ? { productUuid: launch.productUuid } : {}),
      ...(launch.joinCreds ? { joinCreds: launch.joinCreds } : {}),
      log,
    });
    saveNodeMembership(stateDir, { siteId, nodeId, agentId: agent.agentId, durable: agent.durable, ...(agent.credentials ? { credentials: agent.credentials } : {}) });
    joined = { durable: agent.durable };
    nc = agent.nc;
  } else if (remembered) {
    if (remembered.siteId !== siteId || remembered.nodeId !== nodeId) {
      throw new PlatformError('PRECONDITION_FAILED', `${stateDir} belongs to ${remembered.siteId}/${remembered.nodeId}, not ${siteId}/${nodeId}`);
    }
    joined = { durable: remembered.durable };
    nc = await connectNats(launch.natsUrl, name, { waitForServer: true, ...(remembered.credentials ? { credentials: remembered.credentials } : {}) });
  } else {
    nc = await connectNats(launch.natsUrl, name, { waitForServer: true });
  }
  try {
    const agent = await startNodeAgent(nc, {
      siteId,
      nodeId,
      stateDir,
      ...(launch.disks ? { disks: launch.disks } : {}),
      ...(launch.ackWaitMs ? { ackWaitMs: launch.ackWaitMs } : {}),
      ...(joined ? { joined } : {}),
      log,
    });
    return { agent, nc };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
