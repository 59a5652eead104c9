import { existsSync, mkdirSync, openSync, closeSync, ftruncateSync, fstatSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { loadOrCreateIdentity } from '../agent/identity.ts';
import { connectJoinedAgent } from '../agent/joinedConnection.ts';
import { pendingJoinUserKey } from '../agent/pendingJoin.ts';
import { launchNodeAgent, type NodeAgent } from '../node/nodeAgent.ts';
import { sizeOfDisk, type MachineDisk } from '../ramdisk/blockDevices.ts';
import { startRamdiskAgent, type RamdiskAgent } from '../ramdisk/ramdiskAgent.ts';
import { firstStageIpxeScript, ramdiskParamsOf } from '../site/ipxeScript.ts';
import { runSimulatedIpxe } from './ipxe.ts';
import {
  AutoinstallError,
  autoinstallSeedOf,
  bcdNodeArgsOf,
  fetchInstallMedia,
  installOs,
  joinCredsOf,
  loadNodeUnit,
  readOsMarker,
  saveNodeUnit,
  type InstallRecord,
} from './autoinstall.ts';
import { startBmcSimulator, type BmcSimulator, type BmcSimulatorOptions } from './bmc/index.ts';
import { fitDrivesToDisks } from './machineDrives.ts';
import { writeMachineHardware } from './machineHardware.ts';
import { isMarkedImageOs, markImageOs, readImageSeed, zeroImageSeed } from './imageSeed.ts';
import type { NodeSeed } from '../../schemas/agent/nodeSeed.ts';

export interface SimulatedMachineOptions {
  siteId: string;
  nodeId: string;
  /** Disks and the ramdisk's state live under `<dataDir>/<nodeId>/`. */
  dataDir: string;
  bmc: BmcSimulatorOptions;
  /** Default 64 MiB, created sparse. */
  diskSizeBytes?: number;
  /** Default 1. */
  diskCount?: number;
  /** Block devices (or files) to use as the machine's disks instead of `diskCount` files under `dataDir`. */
  disks?: readonly string[];
  /**
   * How many of its disks (the first ones) the ramdisk's kernel sees; default all. Fewer: a controller the ramdisk
   * has no driver for, whose disks the BMC still lists.
   */
  ramdiskSeesDisks?: number;
  /**
   * How many of its disks (the first ones) the BMC lists as drives; default all. Fewer: a disk added behind the BMC's
   * back (or on a controller it cannot see), which only an in-band inspection finds.
   */
  bmcListsDisks?: number;
  /** The machine's iPXE script URL, as DHCP would hand it out (asked at each PXE boot). */
  bootUrl: () => string | undefined;
  /** The first n network boots are lost at power-on: the firmware hangs before DHCP until the next reset. */
  lostBoots?: number;
  ramdiskAckWaitMs?: number;
  /** How often the ramdisk heartbeats while a command runs (default 10 s). */
  ramdiskHeartbeatIntervalMs?: number;
  log: Logger;
}

/**
 * What the host is doing: nothing, the ramdisk, an installed OS on disk, an empty disk, the installer from CD
 * (installing, or waiting at the console for a CD without an autoinstall seed), a failed boot, or a crashed ramdisk
 * (on, running nothing, until the BMC resets it).
 */
export type MachineRunState = 'off' | 'ramdisk' | 'os' | 'noOs' | 'media' | 'bootFailed' | 'crashed';

export interface SimulatedMachine {
  readonly nodeId: string;
  readonly bmc: BmcSimulator;
  readonly disks: readonly string[];
  readonly runState: MachineRunState;
  readonly ramdisk: RamdiskAgent | undefined;
  /** The iPXE scripts fetched, in boot order (the boot artefact path, observable). */
  readonly bootScripts: readonly string[];
  /** What the firmware printed on the serial console (iPXE's messages and failed fetches), oldest first. */
  readonly console: readonly string[];
  /** Resolves with the ramdisk once one runs (after a PXE boot). */
  ramdiskStarted(): Promise<RamdiskAgent>;
  /**
   * The ramdisk dies where it stands (a kernel panic, a hung machine): its agent stops mid-command without a result or
   * another word, and the machine stays powered on, running nothing, until its BMC resets it.
   */
  crashRamdisk(): Promise<void>;
  /** The installed OS's agent (`bcd node`), while it runs. */
  readonly nodeAgent: NodeAgent | undefined;
  /** What unattended installs from the CD put on this machine, in order. */
  readonly installs: readonly InstallRecord[];
  /** Late-commands the simulated installer did not run (anything but `bcd node`), in order. */
  readonly ignoredLateCommands: readonly string[];
  /** Resolves with the node agent once one runs (after an install from CD, or a disk boot of an installed OS). */
  nodeAgentStarted(): Promise<NodeAgent>;
  close(): Promise<void>;
}

function ensureDisk(path: string, size: number): void {
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
  try {
    if (fstatSync(fd).size < size) ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
}

/** The machine's SMBIOS system UUID: in simulation, the ComputerSystem `UUID` its BMC serves. */
function systemUuidOf(bmc: BmcSimulator): string | undefined {
  const members = (bmc.resource('/redfish/v1/Systems') as { Members?: { '@odata.id'?: string }[] } | undefined)?.Members ?? [];
  const system = members[0]?.['@odata.id'] ? (bmc.resource(members[0]['@odata.id']) as { UUID?: unknown } | undefined) : undefined;
  return typeof system?.UUID === 'string' && /^[0-9a-f-]{36}$/i.test(system.UUID) ? system.UUID.toLowerCase() : undefined;
}

function diskHasData(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(4096);
    readSync(fd, head, 0, head.length, 0);
    return head.some((b) => b !== 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * A bare-metal machine in simulation: a Redfish BMC simulator plus file-backed disks. A PXE boot runs the firmware's
 * iPXE (`./ipxe.ts`) on the embedded first stage, which chainloads the machine's iPXE script from the site agent
 * (waiting out a 503 with `Retry-After`, retrying other failures), then runs `bcd ramdisk` in-process with the
 * parameters from its kernel line (its own NATS connection, as a real ramdisk would have); power loss or the next
 * reset stops either. A CD boot
 * runs an unattended Ubuntu install from the ISO in the BMC's CD slot (`./autoinstall.ts`) whose `bcd node`
 * late-command starts the node agent; a later disk boot of that OS starts it again with its kept identity.
 */
export async function startSimulatedMachine(options: SimulatedMachineOptions): Promise<SimulatedMachine> {
  const { nodeId, log } = options;
  const home = join(options.dataDir, nodeId);
  mkdirSync(home, { recursive: true });
  const disks = options.disks ?? Array.from({ length: options.diskCount ?? 1 }, (_, i) => join(home, `disk${i}.img`));
  if (!options.disks) for (const disk of disks) ensureDisk(disk, options.diskSizeBytes ?? 64 << 20);

  const fitted = await Promise.all(disks.map(async (path, i) => ({ path, serial: `SIM-${nodeId}-${i}`.toUpperCase(), sizeBytes: await sizeOfDisk(path) })));
  const bmc = await startBmcSimulator(options.bmc);
  // The BMC lists the machine's disks as its drives, each with a serial of its own: what inspection records and
  // what a wipe is checked against.
  const models = fitDrivesToDisks(bmc, fitted.slice(0, options.bmcListsDisks ?? fitted.length));
  const machineDisks: MachineDisk[] = fitted.map(({ path, serial }, i) => ({ path, serial, model: models[i] ?? (i < models.length ? null : 'Unlisted Disk') }));
  const ramdiskDisks = machineDisks.slice(0, options.ramdiskSeesDisks ?? machineDisks.length);
  let runState: MachineRunState = bmc.state.powerState === 'On' ? (disks.some(diskHasData) ? 'os' : 'noOs') : 'off';
  let ramdisk: { agent: RamdiskAgent; nc: NatsConnection } | undefined;
  let nodeAgent: { agent: NodeAgent; nc: NatsConnection } | undefined;
  const bootScripts: string[] = [];
  const consoleLines: string[] = [];
  const installs: InstallRecord[] = [];
  const ignoredLateCommands: string[] = [];
  const waiters: ((agent: RamdiskAgent) => void)[] = [];
  const nodeWaiters: ((agent: NodeAgent) => void)[] = [];
  // The installed OS's disk-resident state (agent key, journal, membership): it survives reboots, not reinstalls.
  const osStateDir = join(home, 'os-state');
  let transitions: Promise<void> = Promise.resolve();

  const stopRamdisk = async () => {
    const running = ramdisk;
    ramdisk = undefined;
    if (!running) return;
    await running.agent.stop();
    await running.nc.close();
  };
  const stopNodeAgent = async () => {
    const running = nodeAgent;
    nodeAgent = undefined;
    if (!running) return;
    await running.agent.stop();
    await running.nc.close();
  };
  const stopAgents = async () => {
    await stopRamdisk();
    await stopNodeAgent();
  };

  // How the installed OS runs `bcd node`: in-process, with the machine's SMBIOS UUID and its disk-resident state.
  const startNode = async (args: { siteId: string; nodeId: string; natsUrl: string; token?: string; joinCreds?: string }) => {
    const productUuid = systemUuidOf(bmc);
    const running = await launchNodeAgent({
      ...args,
      stateDir: osStateDir,
      ...(productUuid ? { productUuid } : {}),
      disks,
      log: log.child({ nodeId, agent: 'node' }),
    });
    nodeAgent = running;
    saveNodeUnit(osStateDir, { siteId: args.siteId, nodeId: args.nodeId, natsUrl: args.natsUrl });
    runState = 'os';
    for (const resolve of nodeWaiters.splice(0)) resolve(running.agent);
  };

  // The Ubuntu live installer with an autoinstall seed: the BMC streams the CD from its URL, the installer writes
  // the OS and runs the late-commands; a failing late-command fails the install, as in subiquity.
  const cdBoot = async () => {
    runState = 'media';
    const url = bmc.insertedMedia();
    if (!url) throw new AutoinstallError('MEDIA_UNAVAILABLE', 'Cd boot with no media in the CD slot');
    const seed = autoinstallSeedOf(await fetchInstallMedia(url));
    if (!seed) return;
    const install = { ...installOs(disks[0]!, osStateDir, seed), mediaUrl: url };
    installs.push(install);
    for (const [i, command] of seed.lateCommands.entries()) {
      const node = bcdNodeArgsOf(command);
      if (!node || nodeAgent) {
        ignoredLateCommands.push(install.lateCommands[i]!);
        continue;
      }
      const joinCreds = node.join.credsFile ? await joinCredsOf(node.join.credsFile) : undefined;
      await startNode({
        siteId: node.siteId,
        nodeId: node.nodeId,
        natsUrl: node.natsUrl,
        ...(node.join.token ? { token: node.join.token } : {}),
        ...(joinCreds ? { joinCreds } : {}),
      });
    }
    runState = 'os';
  };

  // An installed OS whose agent joined before starts it again on every disk boot, with the key it kept.
  const diskBoot = async () => {
    if (!disks.some(diskHasData)) {
      runState = 'noOs';
      return;
    }
    runState = 'os';
    const seeded = readImageSeed(disks[0]!);
    if (seeded && seeded.seed.nodeId === nodeId) return seededBoot(seeded.seed, seeded.offset);
    const unit = readOsMarker(disks[0]!) || isMarkedImageOs(osStateDir, disks[0]!) ? loadNodeUnit(osStateDir) : undefined;
    if (!unit) return;
    await startNode(unit).catch((err: unknown) => log.warn({ err, nodeId }, 'installed OS booted; its node agent did not start'));
  };

  // The first boot of a deployed image: a new OS, whose `bcd node` joins with the deploy's seed, which is then zeroed.
  const seededBoot = async (seed: NodeSeed, offset: number) => {
    rmSync(osStateDir, { recursive: true, force: true });
    const joinCreds = seed.joinCredsUrl ? await joinCredsOf(seed.joinCredsUrl) : undefined;
    try {
      await startNode({ siteId: seed.siteId, nodeId, natsUrl: seed.natsUrl, token: seed.joinToken, ...(joinCreds ? { joinCreds } : {}) });
    } catch (err) {
      return log.warn({ err, nodeId }, 'deployed image booted; its node agent did not join');
    }
    zeroImageSeed(disks[0]!, offset);
    markImageOs(osStateDir, disks[0]!);
  };

  // What a ramdisk's init does with `bc.join`: read the machine's SMBIOS UUID, fetch the public join credential the
  // script names (broker mode), and join with the token before doing anything else.
  const joinAsRamdisk = async (params: Record<string, string>, stateDir: string) => {
    const credsResponse = params.joincreds ? await fetch(params.joincreds) : undefined;
    if (credsResponse && !credsResponse.ok) throw new Error(`join credential fetch answered ${credsResponse.status}`);
    const productUuid = systemUuidOf(bmc);
    return connectJoinedAgent({
      natsUrl: params.nats!,
      name: `bcd-ramdisk-${nodeId}`,
      role: 'ramdisk',
      token: params.join!,
      identity: loadOrCreateIdentity(stateDir),
      siteId: params.site!,
      nodeId,
      ...(productUuid ? { productUuid } : {}),
      ...(credsResponse ? { joinCreds: await credsResponse.text(), userKey: pendingJoinUserKey(stateDir) } : {}),
      log: log.child({ nodeId, agent: 'ramdisk' }),
    });
  };

  // The firmware's iPXE runs the embedded first stage, with the per-machine script URL as DHCP's boot file name.
  let lostBoots = options.lostBoots ?? 0;
  const pxeBoot = async (signal: AbortSignal) => {
    if (lostBoots > 0) {
      lostBoots--;
      consoleLines.push('firmware hung at power-on: no network boot');
      runState = 'bootFailed';
      return;
    }
    const url = options.bootUrl();
    if (!url) throw new Error('no boot URL for this machine (is the site agent running?)');
    const ipxe = await runSimulatedIpxe(firstStageIpxeScript(), {
      dhcp: { filename: url },
      onScript: (script) => bootScripts.push(script),
      console: (line) => consoleLines.push(line),
      signal,
    });
    if (!ipxe.booted) throw new Error(`iPXE left network boot (status ${ipxe.status})`);
    const params = ramdiskParamsOf(ipxe.kernelLine);
    if (params.node !== nodeId || !params.site || !params.nats) throw new Error(`iPXE script is not for ${nodeId}`);
    // A ramdisk keeps its state in RAM: every boot starts with a new identity and an empty journal, as on hardware.
    const stateDir = join(home, 'ramdisk-state');
    rmSync(stateDir, { recursive: true, force: true });
    // The ramdisk's /init restarts `bcd ramdisk` when it exits (a NATS node lost mid-start, say): so does this one.
    // A join that went through is kept: its token is spent, and the agent starts again on the joined connection.
    const session: { joined?: Awaited<ReturnType<typeof joinAsRamdisk>>; nc?: NatsConnection } = {};
    for (let attempt = 1; ; attempt++) {
      try {
        return await startRamdisk(params, { site: params.site, nats: params.nats }, stateDir, session);
      } catch (err) {
        if (signal.aborted || attempt >= 30) {
          await session.nc?.close().catch(() => undefined);
          throw err;
        }
        log.warn({ err, nodeId, attempt }, 'simulated ramdisk agent exited during start; restarting it');
        await sleep(1_000, undefined, { signal });
      }
    }
  };

  const startRamdisk = async (
    params: ReturnType<typeof ramdiskParamsOf>,
    checked: { site: string; nats: string },
    stateDir: string,
    session: { joined?: Awaited<ReturnType<typeof joinAsRamdisk>>; nc?: NatsConnection },
  ) => {
    if (params.join) session.joined ??= await joinAsRamdisk(params, stateDir);
    const joined = session.joined;
    session.nc ??= joined?.nc ?? (await connectNats(checked.nats, `bcd-ramdisk-${nodeId}`, { waitForServer: true }));
    const nc = session.nc;
    // What the ramdisk's kernel shows of the machine, for `hardware.probe`: written at each boot, as /sys and /proc are.
    const hardwareRoot = join(home, 'ramdisk-kernel');
    writeMachineHardware(
      hardwareRoot,
      bmc,
      ramdiskDisks.map((disk, i) => ({ sizeBytes: fitted[i]!.sizeBytes, serial: disk.serial!, model: disk.model })),
    );
    const agent = await startRamdiskAgent(nc, {
      ...(joined ? { joined: { durable: joined.durable, ...(joined.userPublicKey ? { userPublicKey: joined.userPublicKey } : {}) } } : {}),
      siteId: checked.site,
      nodeId,
      stateDir,
      disks: ramdiskDisks,
      hardwareRoot,
      ...(params.boot ? { siteCacheUrl: params.boot } : {}),
      ...(options.ramdiskAckWaitMs ? { ackWaitMs: options.ramdiskAckWaitMs } : {}),
      ...(options.ramdiskHeartbeatIntervalMs ? { heartbeatIntervalMs: options.ramdiskHeartbeatIntervalMs } : {}),
      log: log.child({ nodeId, agent: 'ramdisk' }),
    });
    ramdisk = { agent, nc };
    runState = 'ramdisk';
    for (const resolve of waiters.splice(0)) resolve(agent);
  };

  // Boots and power losses are applied one at a time, in the order the BMC reported them. Each one first stops what
  // the firmware was doing (iPXE waiting to retry a fetch), as a power loss or reset does.
  let firmware = new AbortController();
  const enqueue = (step: (signal: AbortSignal) => Promise<void>) => {
    firmware.abort();
    firmware = new AbortController();
    const signal = firmware.signal;
    transitions = transitions
      .then(() => step(signal))
      .catch((err: unknown) => {
        if (signal.aborted) return;
        runState = 'bootFailed';
        log.warn({ err, nodeId }, 'simulated machine boot failed');
      });
  };
  bmc.onPowerLoss(() =>
    enqueue(async () => {
      await stopAgents();
      runState = 'off';
    }),
  );
  bmc.onBoot((target) =>
    enqueue(async (signal) => {
      await stopAgents();
      if (target === 'Pxe') return pxeBoot(signal);
      return target === 'Cd' ? cdBoot() : diskBoot();
    }),
  );

  return {
    nodeId,
    bmc,
    disks,
    get runState() {
      return runState;
    },
    get ramdisk() {
      return ramdisk?.agent;
    },
    get bootScripts() {
      return [...bootScripts];
    },
    get console() {
      return [...consoleLines];
    },
    ramdiskStarted: () => (ramdisk ? Promise.resolve(ramdisk.agent) : new Promise((resolve) => waiters.push(resolve))),
    crashRamdisk: async () => {
      if (!ramdisk) return;
      await stopRamdisk();
      runState = 'crashed';
    },
    get nodeAgent() {
      return nodeAgent?.agent;
    },
    get installs() {
      return [...installs];
    },
    get ignoredLateCommands() {
      return [...ignoredLateCommands];
    },
    nodeAgentStarted: () => (nodeAgent ? Promise.resolve(nodeAgent.agent) : new Promise((resolve) => nodeWaiters.push(resolve))),
    close: async () => {
      firmware.abort();
      await transitions;
      await stopAgents();
      await bmc.close();
    },
  };
}
