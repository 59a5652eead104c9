import type { NatsConnection } from '@nats-io/transport-node';
import type { BcxDriverAdvert } from '../../schemas/bcx/bcxProtocol.ts';
import { startPluginsFolder, type RunningPlugins } from '../bcx/pluginsFolder.ts';
import { cpus, hostname, totalmem } from 'node:os';
import { AgentCommandKinds } from '../../schemas/agent/agentCommand.ts';
import type { HostModuleReport } from '../../schemas/agent/hostModules.ts';
import type { Logger } from '../../services/platform/logger.ts';
import type { AgentExecutor } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import { connectLongLivedAgent } from '../agent/longLivedConnection.ts';
import { startMachineAgent, type MachineAgent } from '../agent/machineAgent.ts';
import { sizeOfDisk } from '../ramdisk/blockDevices.ts';
import type { InstanceRemoveParams, InstanceSpec } from '../../schemas/agent/hostInstances.ts';
import { instanceHost, type InstanceHost, type RuntimePlugin } from './instances/instanceHost.ts';
import { fitInstanceReports, reportOf } from './instances/instanceReports.ts';
import { fetchBundle } from './modules/bundleFetch.ts';
import { moduleHost, type ModuleApplyParams, type ModuleHost, type ModuleRemoveParams } from './modules/moduleHost.ts';
import { moduleReporter } from './modules/moduleState.ts';

/** `node-<nodeId>`: one installed OS per node, the id the join service gives a `node` join. */
export const nodeAgentId = (nodeId: string) => `node-${nodeId}`;

/** Kinds a running OS may run on itself. Wiping or imaging the disk it runs from is the ramdisk's work. */
const refusedOnRunningOs: Partial<Record<string, string>> = {
  'disk.wipe': 'a running OS does not wipe its own disks; PXE-boot the ramdisk for disk.wipe',
  'image.write': 'a running OS does not overwrite its own disks; PXE-boot the ramdisk for image.write',
  'userdata.write': 'user data is read at first boot; the ramdisk writes it before the OS runs',
  'hardware.probe': 'the tenant owns a running OS; an inspection looks from inside with the ramdisk it boots',
};

/** What an installed host's executor works with. */
export interface NodeMachine {
  siteId: string;
  nodeId: string;
  disks: readonly string[];
  /** The host's modules (`module.apply`, `module.remove`); none: those kinds are refused. */
  modules?: ModuleHost;
  /** The host's instances (`instance.apply`, `instance.remove`); none: those kinds are refused. */
  instances?: InstanceHost;
  /** The site agent's HTTP base URL: module bundles are fetched from its verified cache first. */
  siteCacheUrl?: string;
}

/** Runs the `node` kinds an installed host runs on itself: `inventory.report`, `module.*`, `instance.*`. */
export function nodeExecutor(machine: NodeMachine): AgentExecutor {
  return {
    refuse(command) {
      if (command.siteId !== machine.siteId || command.nodeId !== machine.nodeId) {
        return `command for ${command.siteId}/${command.nodeId} reached the node agent of ${machine.siteId}/${machine.nodeId}`;
      }
      if (AgentCommandKinds[command.kind].runsOn !== 'node') return `${command.kind} runs on the site agent, not inside the machine`;
      if (command.kind.startsWith('module.') && !machine.modules) return 'this node agent keeps no modules';
      if (command.kind.startsWith('instance.') && !machine.instances) return 'this node agent runs no instances';
      return refusedOnRunningOs[command.kind];
    },
    async execute(command, params, ctx) {
      if (command.kind === 'module.apply' && machine.modules) {
        const apply = params as ModuleApplyParams;
        return machine.modules.apply(apply, await fetchBundle(apply.bundleUrl, apply.bundleSha256, ctx, machine.siteCacheUrl));
      }
      if (command.kind === 'module.remove' && machine.modules) return machine.modules.remove(params as ModuleRemoveParams);
      if (command.kind === 'instance.apply' && machine.instances) return machine.instances.apply(params as InstanceSpec);
      if (command.kind === 'instance.remove' && machine.instances) return machine.instances.remove((params as InstanceRemoveParams).id);
      if (command.kind !== 'inventory.report') throw new AgentError('WRONG_AGENT', `${command.kind} does not run on an installed node`);
      return {
        hostname: hostname(),
        cpus: cpus().length,
        memoryMiB: Math.floor(totalmem() / (1 << 20)),
        disks: await Promise.all(machine.disks.map(async (path) => ({ path, sizeBytes: await sizeOfDisk(path) }))),
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
  /** How often it says it is alive (default 10 s). */
  heartbeatIntervalMs?: number;
  /** Set when the agent joined (now or on an earlier boot): the control plane registered its key and made its durable. */
  joined?: { durable: string };
  /** How often it asks whether its key is to be rotated, and in broker mode its credentials' user key. */
  keyRotation?: { intervalMs?: number; userPublicKey?: string };
  /** The bcx drivers running on the host, advertised in every heartbeat. */
  readonly drivers?: () => readonly BcxDriverAdvert[];
  /** The bcx plugins running on the host: the `runtime` ones serve `instance.apply` (none: every runtime is refused). */
  readonly runtimes?: () => Iterable<RuntimePlugin>;
  /** How often recorded instances are compared with their runtimes' `list` (default 30 s; also once at start). */
  reconcileIntervalMs?: number;
  /** The site agent's HTTP base URL: module bundles are fetched from its verified cache first. */
  siteCacheUrl?: string;
  /** The kernel's boot id (default: read from /proc): a `rebootRequired` module is pending until it changes. */
  bootId?: () => string;
  log: Logger;
}

/** A running `bcd node`. */
export type NodeAgent = MachineAgent;

/**
 * `bcd node`: the agent of an installed host. Like the ramdisk, but its identity and journal persist in `stateDir`
 * (fsynced: a host keeps both across power losses) and it refuses to wipe or image its own disks.
 */
export function startNodeAgent(nc: NatsConnection, options: NodeAgentOptions): Promise<NodeAgent> {
  const { siteId, nodeId } = options;
  const bootId = options.bootId ? { bootId: options.bootId } : {};
  const modules = moduleHost({ stateDir: options.stateDir, ...bootId });
  const reports: () => HostModuleReport[] = moduleReporter(options.stateDir, options.bootId);
  // Modules applied before a reboot take effect now: probe them so the heartbeats say what runs.
  void modules.settle().catch((err: unknown) => options.log.warn({ err }, 'module probes at start failed'));
  const instances = instanceHost({ stateDir: options.stateDir, runtimes: options.runtimes ?? (() => []), log: options.log });
  // Specs recorded before a restart, or whose apply a plugin crash cut short, are applied again: at start, then now and then.
  const reconcile = () => void instances.reconcile().catch((err: unknown) => options.log.warn({ err }, 'instance reconciliation failed'));
  reconcile();
  const reconciling = setInterval(reconcile, options.reconcileIntervalMs ?? 30_000);
  const started = startMachineAgent(nc, {
    role: 'node',
    siteId,
    nodeId,
    stateDir: options.stateDir,
    agentIdOf: () => nodeAgentId(nodeId),
    executor: nodeExecutor({
      siteId,
      nodeId,
      disks: options.disks ?? [],
      modules,
      instances,
      ...(options.siteCacheUrl ? { siteCacheUrl: options.siteCacheUrl } : {}),
    }),
    modules: () => {
      try {
        return reports();
      } catch (err) {
        options.log.warn({ err }, 'module state unreadable; heartbeat sent without it');
        return [];
      }
    },
    instances: () => {
      try {
        return fitInstanceReports(instances.records().map(reportOf));
      } catch (err) {
        options.log.warn({ err }, 'instance journal unreadable; heartbeat sent without it');
        return [];
      }
    },
    ...(options.ackWaitMs ? { ackWaitMs: options.ackWaitMs } : {}),
    ...(options.heartbeatIntervalMs ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
    joined: options.joined,
    ...(options.keyRotation ? { keyRotation: options.keyRotation } : {}),
    ...(options.drivers ? { drivers: options.drivers } : {}),
    log: options.log,
  });
  return started.then(
    (agent) => {
      const stopAgent = agent.stop.bind(agent);
      agent.stop = async () => {
        clearInterval(reconciling);
        await stopAgent();
      };
      return agent;
    },
    (err: unknown) => {
      clearInterval(reconciling);
      throw err;
    },
  );
}

export interface NodeAgentLaunch {
  siteId: string;
  nodeId: string;
  natsUrl: string;
  stateDir: string;
  /** The single-use join token of the first start; later starts resume the membership kept in `stateDir` (and ignore it). */
  token?: string;
  /** Broker mode: the public join credential (`join.creds` text). */
  joinCreds?: string;
  /** The host's SMBIOS system UUID, for tokens that expect one. */
  productUuid?: string;
  disks?: readonly string[];
  ackWaitMs?: number;
  /** How often it asks whether its key is to be rotated (default 10 minutes). */
  keyCheckIntervalMs?: number;
  /** The bcx plugins folder: its plugins start before the agent, which advertises them. */
  plugins?: { folder: string; privileged: readonly string[] };
  /** The site agent's HTTP base URL (`--site-url`): module bundles come from its verified cache first. */
  siteCacheUrl?: string;
  log: Logger;
}

/**
 * What `bcd node` does at start: resume the membership of an earlier start, or join with the token (role `node`) and
 * keep the membership (`connectLongLivedAgent`). Without either, it registers itself (no-join mode, like the other
 * agents). Returns the agent and the connection it runs on (the caller closes it after `agent.stop()`).
 */
export async function launchNodeAgent(launch: NodeAgentLaunch): Promise<{ agent: NodeAgent; nc: NatsConnection; plugins?: RunningPlugins }> {
  const { siteId, nodeId, stateDir, log } = launch;
  const plugins = launch.plugins
    ? await startPluginsFolder(launch.plugins.folder, { stateRoot: stateDir, privileged: new Set(launch.plugins.privileged), log })
    : undefined;
  const { nc, joined } = await connectLongLivedAgent({
    role: 'node',
    siteId,
    nodeId,
    natsUrl: launch.natsUrl,
    name: `bcd-node-${nodeId}`,
    stateDir,
    ...(launch.token ? { token: launch.token } : {}),
    ...(launch.joinCreds ? { joinCreds: launch.joinCreds } : {}),
    ...(launch.productUuid ? { productUuid: launch.productUuid } : {}),
    log,
  });
  try {
    const agent = await startNodeAgent(nc, {
      siteId,
      nodeId,
      stateDir,
      ...(launch.disks ? { disks: launch.disks } : {}),
      ...(launch.ackWaitMs ? { ackWaitMs: launch.ackWaitMs } : {}),
      ...(joined ? { joined: { durable: joined.durable } } : {}),
      keyRotation: {
        ...(launch.keyCheckIntervalMs ? { intervalMs: launch.keyCheckIntervalMs } : {}),
        ...(joined?.userPublicKey ? { userPublicKey: joined.userPublicKey } : {}),
      },
      ...(plugins ? { drivers: () => plugins.drivers(), runtimes: () => plugins.hosts.values() } : {}),
      ...(launch.siteCacheUrl ? { siteCacheUrl: launch.siteCacheUrl } : {}),
      log,
    });
    return { agent, nc, ...(plugins ? { plugins } : {}) };
  } catch (err) {
    await nc.close();
    await plugins?.stop();
    throw err;
  }
}
