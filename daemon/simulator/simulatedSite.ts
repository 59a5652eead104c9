import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { sealingAad } from '../../schemas/secrets/sealed.ts';
import type { MasterKey } from '../../services/secrets/masterKey.ts';
import { seal } from '../../services/secrets/sealing.ts';
import { mintJoinToken, type CommandSender } from '../../services/trust/joinToken/mint.ts';
import { loadOrCreateIdentity } from '../agent/identity.ts';
import { connectJoinedAgent } from '../agent/joinedConnection.ts';
import { startSiteAgent, type SiteAgent } from '../site/siteAgent.ts';
import { SiteMachineTrees, setHostAddress } from './bmc/index.ts';
import { startSimulatedMachine, type SimulatedMachine } from './machine.ts';

export interface SimulatedSiteOptions {
  siteId: string;
  machines: number;
  /** First BMC port; machine i listens on base + i so enrolled addresses survive restarts (0: any free port). */
  bmcPortBase: number;
  /** Disks, ramdisk state and the site agent's state. Default: `<BC_DATA_DIR or ./.data>/sim/<siteId>`. */
  dataDir?: string;
  /** The NATS URL machines' ramdisks connect to. Default: the server `nc` is connected to. */
  natsUrl?: string;
  /** Per machine disk size, default 64 MiB (sparse). */
  diskSizeBytes?: number;
  /** Machine i's disks instead of one file: block devices or files, and how many of them its ramdisk and its BMC see. */
  machineDisks?: (index: number) => { disks: readonly string[]; ramdiskSees?: number; bmcLists?: number } | undefined;
  /** Port of the site agent's boot/image server (0: any free port). */
  bootHttpPort?: number;
  /** Settle delays of the simulated BMCs, default 200 ms. */
  bmcDelayMs?: number;
  /** How often the machines' ramdisks heartbeat while a command runs (default 10 s). */
  ramdiskHeartbeatIntervalMs?: number;
  /** How long after a reset a machine has to fetch its boot script (the site agent's `bootBudgetMs`). */
  bootBudgetMs?: number;
  /** The first n network boots of every machine are lost at power-on (firmware hung before DHCP), as on flaky hardware. */
  lostBoots?: number;
  /** Default true: run `bcd site` for this site in-process. */
  siteAgent?: boolean;
  /** How often the site agent asks whether its key is to be rotated (default 10 minutes). */
  keyCheckIntervalMs?: number;
  /**
   * Store the BMC credentials as sealed secrets (`secrets.put`, sealed with this master key) and have the site agent
   * obtain them by grant. Unset: they go in a lab credentials file of the site agent (`credentials.json`, tests only).
   */
  secrets?: { masterKey: MasterKey };
  /**
   * Join with tokens instead of registering: the site agent joins with a site token minted here (as an operator
   * would with `siteTokens.create`) and each PXE boot's ramdisk with the token its boot script carries. `joinCreds`:
   * broker mode, the public join credential agents join with before they hold their own.
   */
  join?: { joinCreds?: string };
  /**
   * Runs the commands that are never served over NATS (`secrets.put` for `secrets`, `siteTokens.create` for `join`)
   * on an in-process bus of the control plane. Required with `secrets` or `join`.
   */
  inProcess?: CommandSender;
  /** Enrol the machines with `inspectInBand`: their first inspection boots the ramdisk. */
  inspectInBand?: boolean;
  /** Enroll the machines into this metal pool (it must exist at this site before the site starts). */
  poolId?: string;
  /** The host IPv4 address machine i's BMC reports on its first NIC (its OS's DHCP lease); undefined: the tree's. */
  hostAddress?: (index: number) => string | undefined;
}

export interface SimulatedSite {
  /** The BMC simulators, one per machine (kept for existing callers). */
  bmcs: SimulatedMachine['bmc'][];
  machines: SimulatedMachine[];
  siteAgent: SiteAgent | undefined;
  stop(): Promise<void>;
}

const SIM_USER = 'admin';
const SIM_PASSWORD = 'sim-password';
/** Enrol commands awaiting their reply at once while a site starts. */
const ENROLMENTS_IN_FLIGHT = 32;

/**
 * A site of simulated machines for `npm start` and tests: Redfish BMC simulators serving the bundled mockup trees
 * over file-backed disks, the site agent (`bcd site`) granted the BMC credentials from sealed secrets (or, in tests
 * without a master key, reading a lab credentials file), and the site and its machines enrolled through the same
 * command subjects an operator uses.
 */
export async function startSimulatedSite(nc: NatsConnection, options: SimulatedSiteOptions, log: Logger): Promise<SimulatedSite> {
  const trees = Object.values(SiteMachineTrees);
  const dataDir = resolve(options.dataDir ?? join(process.env.BC_DATA_DIR ?? './.data', 'sim', options.siteId));
  const agentDir = join(dataDir, 'site-agent');
  mkdirSync(agentDir, { recursive: true });
  const nodeIds = Array.from({ length: options.machines }, (_, i) => `${options.siteId}-m${String(i + 1).padStart(3, '0')}`);
  const credentialsRef = (nodeId: string) => `secret:${nodeId}-bmc`;
  const inProcess = (): CommandSender => {
    if (!options.inProcess)
      throw new PlatformError('PRECONDITION_FAILED', 'a simulated site with sealed secrets or join tokens needs an in-process command bus (inProcess)');
    return options.inProcess;
  };
  // The secrets the enroll commands reference only by name, where the site agent's resolver looks them up.
  if (options.secrets) {
    for (const nodeId of nodeIds) await storeSimulatedSecret(inProcess(), `${nodeId}-bmc`, options.secrets.masterKey, log);
  } else {
    writeFileSync(
      join(agentDir, 'credentials.json'),
      JSON.stringify(Object.fromEntries(nodeIds.map((id) => [credentialsRef(id), { username: SIM_USER, password: SIM_PASSWORD }])), null, 2),
      { mode: 0o600 },
    );
  }

  let siteAgent: SiteAgent | undefined;
  let siteAgentNc: NatsConnection | undefined;
  if (options.siteAgent ?? true) {
    const natsUrl = options.natsUrl ?? `nats://${nc.getServer()}`;
    let joined: { durable: string; userPublicKey: string | undefined } | undefined;
    let agentNc = nc;
    if (options.join) {
      // A site token names an existing site: create it first (a restart re-sends the same command id).
      await sendOnce(nc, 'site.create', { siteId: options.siteId, name: `Simulated site ${options.siteId}` }, `sim-site-${options.siteId}`);
      const { token } = await mintJoinToken(inProcess(), { role: 'site', siteId: options.siteId, ttlSeconds: 600 });
      const agent = await connectJoinedAgent({
        natsUrl,
        name: `bcd-site-${options.siteId}`,
        role: 'site',
        token,
        identity: loadOrCreateIdentity(agentDir),
        siteId: options.siteId,
        ...(options.join.joinCreds ? { joinCreds: options.join.joinCreds } : {}),
        log: log.child({ agent: 'site' }),
      });
      agentNc = agent.nc;
      siteAgentNc = agent.nc;
      joined = { durable: agent.durable, userPublicKey: agent.userPublicKey };
    }
    siteAgent = await startSiteAgent(agentNc, {
      siteId: options.siteId,
      stateDir: agentDir,
      natsUrl,
      http: { port: options.bootHttpPort ?? 0 },
      redfish: { timeoutMs: 5_000, timing: { pollIntervalMs: 50 } },
      credentials: options.secrets ? 'granted' : { labFile: join(agentDir, 'credentials.json') },
      ...(joined ? { joined } : {}),
      ...(options.join?.joinCreds ? { joinCreds: options.join.joinCreds } : {}),
      ...(options.keyCheckIntervalMs ? { keyCheckIntervalMs: options.keyCheckIntervalMs } : {}),
      ...(options.bootBudgetMs ? { bootBudgetMs: options.bootBudgetMs } : {}),
      log: log.child({ agent: 'site' }),
    });
  }

  const machines: SimulatedMachine[] = [];
  for (const [i, nodeId] of nodeIds.entries()) {
    const delay = options.bmcDelayMs ?? 200;
    machines.push(
      await startSimulatedMachine({
        siteId: options.siteId,
        nodeId,
        dataDir: join(dataDir, 'machines'),
        bmc: {
          tree: trees[i % trees.length]!,
          port: options.bmcPortBase === 0 ? 0 : options.bmcPortBase + i,
          username: SIM_USER,
          password: SIM_PASSWORD,
          powerDelayMs: delay,
          mediaDelayMs: delay,
          // The machine's first NIC has the MAC it is enrolled with, as a real machine's sticker and BMC agree; and
          // its own SMBIOS UUID, as every real machine has (machines serving one tree would otherwise share it).
          systems: [{ macs: [simulatedMac(i)], uuid: simulatedUuid(options.siteId, nodeId) }],
        },
        ...(options.diskSizeBytes ? { diskSizeBytes: options.diskSizeBytes } : {}),
        ...machineDisksOf(options.machineDisks?.(i)),
        ...(options.ramdiskHeartbeatIntervalMs ? { ramdiskHeartbeatIntervalMs: options.ramdiskHeartbeatIntervalMs } : {}),
        bootUrl: () => siteAgent?.bootUrlFor(nodeId),
        ...(options.lostBoots ? { lostBoots: options.lostBoots } : {}),
        log,
      }),
    );
    const address = options.hostAddress?.(i);
    if (address && !setHostAddress(machines[i]!.bmc, address)) throw new Error(`machine ${nodeId} has no NIC to show ${address} on`);
  }

  await sendOnce(nc, 'site.create', { siteId: options.siteId, name: `Simulated site ${options.siteId}` }, `sim-site-${options.siteId}`);
  // Several enrolments at once: one after another, each waiting for its reply on an event loop that also runs the
  // inspections of the machines enrolled before it, made enrolling a site of thousands take minutes. Every machine is
  // started first, so no inspection slows the starts down.
  const enrol = async (i: number, machine: SimulatedMachine) => {
    const nodeId = machine.nodeId;
    await sendOnce(
      nc,
      'metal.enroll',
      {
        nodeId,
        siteId: options.siteId,
        bmc: { address: machine.bmc.url, credentialsRef: credentialsRef(nodeId) },
        hardwareProfile: trees[i % trees.length]!,
        macs: [simulatedMac(i)],
        ...(options.poolId ? { poolId: options.poolId } : {}),
        ...(options.inspectInBand ? { inspectInBand: true } : {}),
      },
      `sim-enroll-${nodeId}`,
    );
    log.info({ nodeId, bmc: machine.bmc.url }, 'simulated machine enrolled');
  };
  let next = 0;
  const enrolSome = async () => {
    for (let i = next++; i < machines.length; i = next++) await enrol(i, machines[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(ENROLMENTS_IN_FLIGHT, machines.length) }, enrolSome));
  return {
    bmcs: machines.map((m) => m.bmc),
    machines,
    siteAgent,
    stop: async () => {
      for (const machine of machines) await machine.close();
      await siteAgent?.stop();
      await siteAgentNc?.close();
    },
  };
}

const machineDisksOf = (given: ReturnType<NonNullable<SimulatedSiteOptions['machineDisks']>>) =>
  given
    ? {
        disks: given.disks,
        ...(given.ramdiskSees === undefined ? {} : { ramdiskSeesDisks: given.ramdiskSees }),
        ...(given.bmcLists === undefined ? {} : { bmcListsDisks: given.bmcLists }),
      }
    : {};

const simulatedUuid = (siteId: string, nodeId: string) =>
  createHash('sha256')
    .update(`${siteId}/${nodeId}`)
    .digest('hex')
    .slice(0, 32)
    .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
const simulatedMac = (i: number) => `52:54:00:${[(i >> 16) & 255, (i >> 8) & 255, i & 255].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;

/**
 * Sends a command until it is answered: the simulated site may start before the commands service does, and a
 * retry under the same command id cannot apply twice. An existing site or node (a restart) is fine.
 */
async function sendOnce(nc: NatsConnection, name: string, payload: unknown, commandId: string): Promise<void> {
  for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2_000)) {
    try {
      await sendCommand(nc, name, payload, { commandId });
      return;
    } catch (err) {
      if (err instanceof PlatformError && err.code === 'ALREADY_EXISTS') return;
      if (!(err instanceof PlatformError && err.code === 'UNAVAILABLE')) throw err;
      await sleep(delayMs);
    }
  }
}

/**
 * Stores one simulated BMC's credentials as version 1 of a sealed secret. A restart re-sends the same command id and
 * is answered as a duplicate; a secret an operator has since replaced (CONCURRENCY_CONFLICT) is left as it is.
 */
async function storeSimulatedSecret(send: CommandSender, secretId: string, masterKey: MasterKey, log: Logger): Promise<void> {
  const sealed = seal(JSON.stringify({ username: SIM_USER, password: SIM_PASSWORD }), masterKey, sealingAad(secretId, 1));
  try {
    await send('secrets.put', { secretId, kind: 'bmc', version: 1, sealed, description: 'simulated BMC' }, `sim-secret-${secretId}`);
  } catch (err) {
    if (!(err instanceof PlatformError && err.code === 'CONCURRENCY_CONFLICT')) throw err;
    log.info({ secretId }, 'simulated BMC secret already replaced; kept');
  }
}
