import type { NatsConnection } from '@nats-io/transport-node';
import { ramdiskAgentId } from '../agent/identity.ts';
import { startMachineAgent, type MachineAgent } from '../agent/machineAgent.ts';
import type { Logger } from '../../services/platform/logger.ts';
import type { DiskSelection } from './blockDevices.ts';
import { ramdiskExecutor } from './ramdiskExecutor.ts';

export interface RamdiskAgentOptions {
  siteId: string;
  nodeId: string;
  stateDir: string;
  /** The machine's disks (block devices, or files in simulation), or `discover`: every disk in /sys/block. */
  disks: DiskSelection;
  /** The site agent's HTTP base URL; image.write tries its cache before the command's URL. */
  siteCacheUrl?: string;
  /** Where `hardware.probe` reads `sys/` and `proc/` (default `/`); the simulator gives each machine a tree of its own. */
  hardwareRoot?: string;
  ackWaitMs?: number;
  /** How often it says it is alive while a command runs (default 10 s). */
  heartbeatIntervalMs?: number;
  /** Set when the agent joined with a token: the control plane registered its key and made its durable. */
  joined?: { durable: string };
  log: Logger;
}

/** A running `bcd ramdisk`. */
export type RamdiskAgent = MachineAgent;

/**
 * `bcd ramdisk`: runs inside a machine booted from PXE, with an identity and a journal that live for one boot
 * (`ramdisk_<agentId>`: a new durable per boot). Registers its key (role `ramdisk`) unless it joined with a token.
 */
export function startRamdiskAgent(nc: NatsConnection, options: RamdiskAgentOptions): Promise<RamdiskAgent> {
  const { siteId, nodeId } = options;
  return startMachineAgent(nc, {
    role: 'ramdisk',
    siteId,
    nodeId,
    stateDir: options.stateDir,
    agentIdOf: (keyId) => ramdiskAgentId(nodeId, keyId),
    journal: { durability: 'process-crash' },
    executor: ramdiskExecutor({
      siteId,
      nodeId,
      disks: options.disks,
      ...(options.siteCacheUrl ? { siteCacheUrl: options.siteCacheUrl } : {}),
      ...(options.hardwareRoot ? { hardwareRoot: options.hardwareRoot } : {}),
    }),
    ...(options.ackWaitMs ? { ackWaitMs: options.ackWaitMs } : {}),
    ...(options.heartbeatIntervalMs ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
    joined: options.joined,
    log: options.log,
  });
}
