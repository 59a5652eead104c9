import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { startCommandConsumer } from '../agent/commandConsumer.ts';
import { runCommand } from '../agent/commandRunner.ts';
import { loadOrCreateIdentity, ramdiskAgentId } from '../agent/identity.ts';
import { CommandJournal } from '../agent/journal.ts';
import { registerAgent, registrationOf } from '../agent/registration.ts';
import { ResultPublisher } from '../agent/resultPublisher.ts';
import { ramdiskExecutor } from './ramdiskExecutor.ts';

export interface RamdiskAgentOptions {
  siteId: string;
  nodeId: string;
  stateDir: string;
  /** The machine's disks (files in simulation). */
  disks: readonly string[];
  /** The site agent's HTTP base URL; image.write tries its cache before the command's URL. */
  siteCacheUrl?: string;
  ackWaitMs?: number;
  /** Set when the agent joined with a token: the control plane registered its key and made its durable. */
  joined?: { durable: string };
  log: Logger;
}

/** A running `bcd ramdisk`. */
export interface RamdiskAgent {
  readonly agentId: string;
  readonly keyId: string;
  readonly publicKey: string;
  readonly registered: Promise<void>;
  idle(): Promise<void>;
  /** Power lost or reboot: running work is abandoned unacked (its journal says `started`). */
  stop(): Promise<void>;
}

/**
 * `bcd ramdisk`: runs inside a machine booted from PXE. Registers its key (role `ramdisk`), consumes
 * `bc.site.<siteId>.node.<nodeId>.cmd` through the durable `ramdisk_<nodeId>` one command at a time, and publishes
 * signed results.
 */
export async function startRamdiskAgent(nc: NatsConnection, options: RamdiskAgentOptions): Promise<RamdiskAgent> {
  const { siteId, nodeId, log } = options;
  const identity = loadOrCreateIdentity(options.stateDir);
  const agentId = ramdiskAgentId(nodeId, identity.keyId);
  const journal = new CommandJournal(options.stateDir, { durability: 'process-crash' });
  const results = new ResultPublisher(jetstream(nc), await jetstreamManager(nc, { checkAPI: false }), identity, agentId);
  const executor = ramdiskExecutor({ siteId, nodeId, disks: options.disks, ...(options.siteCacheUrl ? { siteCacheUrl: options.siteCacheUrl } : {}) });

  // The consumer belongs to this boot's identity and exists before the agent announces itself: it sees every
  // command sent to this boot and none left over from an earlier one (whose journal died with its RAM).
  const consumer = await startCommandConsumer(nc, {
    durable: options.joined?.durable ?? `ramdisk_${agentId}`,
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
    : registerAgent(nc, registrationOf(identity, { agentId, role: 'ramdisk', siteId, nodeId }), identity.keyId, log, stopRegistering.signal);
  registered.catch((err: unknown) => log.error({ err, agentId }, 'agent registration refused'));
  log.info({ agentId, nodeId, disks: options.disks }, 'ramdisk agent started');

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
