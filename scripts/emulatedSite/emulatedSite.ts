import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startVmBmc, type VmBmc } from '../../daemon/simulator/vm/redfishAdapter.ts';
import type { VmAccel } from '../../daemon/simulator/vm/qemuArgs.ts';
import type { SystemResetType } from '../../daemon/simulator/vm/systemBackend.ts';
import { VmSystem } from '../../daemon/simulator/vm/vmSystem.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { repoRoot } from './buildOutput.ts';
import { addTap, startLanDhcp, type SiteNetwork } from './siteNetwork.ts';

/** The BMC's lab credentials and the secret reference nodes are enrolled with (`bcd site --lab-credentials-file`). */
export const EMULATED_BMC = { username: 'admin', password: 'emulated-bmc-Pa55', credentialsRef: 'secret:emulated-bmc' } as const;

export interface EmulatedMachine {
  /** The Redfish system id, also the node id it is enrolled as. */
  id: string;
  uuid: string;
  mac: string;
  /** The raw file behind the VM's /dev/vda. */
  disk: string;
  /** Every disk's raw file, /dev/vda's first (a hidden second disk too). */
  disks: string[];
  /** The BMC address that names this system, for `metal.enroll`. */
  bmcAddress: string;
  system: VmSystem;
  /** Reset requests the BMC acted on, in order (what a destructive power command caused). */
  resets: SystemResetType[];
}

/**
 * A VM's disk by default: the host image (with cloud-init and crun, about 350 MiB) with the seed after it, and past
 * 1 GiB, as placement counts whole GiB of disk and a metal-pool instance takes at least one.
 */
export const DEFAULT_DISK_MIB = 1_088;

export interface EmulatedSiteOptions {
  siteId: string;
  machines: number;
  /** NATS as the site and its machines reach it (an address on the host end of the uplink). */
  natsUrl: string;
  net: SiteNetwork;
  runDir: string;
  /** The built ramdisk (`npm run build:ramdisk`). */
  ramdiskDir: string;
  /** Each VM's disk (`DEFAULT_DISK_MIB` when not given). */
  diskMiB?: number;
  memoryMiB?: number;
  /** QEMU's accelerator (default TCG; `emulatedAccel` picks and checks it). */
  accel?: VmAccel;
  /**
   * A second, smaller disk for the machines this returns its size for (MiB): the VM has it as /dev/vdb, the BMC does
   * not list it (what in-band inspection must flag).
   */
  hiddenDiskMiB?: (machine: number) => number | undefined;
  /** `none`: the VMs' disks bypass the host's page cache (benchmarks). */
  diskCache?: 'none' | 'writeback';
  /** `bcd site` joins with this site token (else it registers, on a stack without broker auth). */
  siteJoinToken?: string;
  /** Broker mode: the public join credential file `bcd site` joins with (`BC_JOIN_CREDS`). */
  siteJoinCreds?: string;
  /** Kernel arguments `bcd site` adds to every ramdisk boot (`--ramdisk-args`). */
  ramdiskArgs?: string;
  /** Port of `bcd site`'s boot HTTP server on the bridge (default 8080). */
  httpPort?: number;
  log: Logger;
}

/**
 * A `bcd site` process in the site namespace, restartable (the state dir persists, with the membership its first join
 * kept: a restart needs no token) and killable as a crash would.
 */
export interface BcdSiteProcess {
  readonly logFile: string;
  readonly stateDir: string;
  readonly starts: number;
  /** Holds the pid of the running process (rewritten at each start). */
  readonly pidFile: string;
  kill(signal?: NodeJS.Signals): Promise<void>;
  start(): void;
  /** Called when it exits without being killed through `kill` (a crash): what a supervisor restarts it on. */
  onCrash(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

export interface EmulatedSite {
  net: SiteNetwork;
  bmc: VmBmc;
  machines: EmulatedMachine[];
  bcdSite: BcdSiteProcess;
  /** The boot path's base URL on the bridge. */
  siteUrl: string;
  stop(): Promise<void>;
}

const macOf = () => `52:54:00:${randomBytes(3).toString('hex').match(/../g)!.join(':')}`;

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** `bcd site` on the bridge: ProxyDHCP beside the LAN's dnsmasq, TFTP, the boot HTTP server, BMCs over the uplink. */
function bcdSiteProcess(options: EmulatedSiteOptions, credentialsFile: string, machines: readonly EmulatedMachine[]): BcdSiteProcess {
  const { net, runDir } = options;
  const stateDir = join(runDir, 'bcd-site');
  const logFile = join(runDir, 'bcd-site.log');
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(logFile, '');
  let child: ChildProcess | undefined;
  let starts = 0;
  const crashListeners: ((code: number | null, signal: NodeJS.Signals | null) => void)[] = [];
  const killedOnPurpose = new WeakSet<ChildProcess>();
  const args = [
    'netns',
    'exec',
    net.netns,
    process.execPath,
    '--import',
    'tsx',
    'daemon/bcd.ts',
    'site',
    '--site',
    options.siteId,
    '--nats',
    options.natsUrl,
    '--state',
    stateDir,
    '--pxe-interface',
    net.bridge,
    '--http-port',
    String(options.httpPort ?? 8080),
    '--ramdisk-dir',
    options.ramdiskDir,
    '--lab-credentials-file',
    credentialsFile,
    ...(options.ramdiskArgs ? ['--ramdisk-args', options.ramdiskArgs] : []),
    // Each VM's serial console (QEMU's -serial file:), followed onto the node's `serial` log as a BMC's SOL would be.
    ...machines.flatMap((m) => ['--serial-console', `${m.id}=${resolve(m.system.vm.paths.serial)}`]),
  ];
  const pidFile = join(runDir, 'bcd-site.pid');
  return {
    logFile,
    stateDir,
    pidFile,
    get starts() {
      return starts;
    },
    onCrash(listener) {
      crashListeners.push(listener);
    },
    start() {
      starts += 1;
      const env = {
        ...process.env,
        BC_LOG_LEVEL: process.env.BC_LOG_LEVEL ?? 'info',
        ...(options.siteJoinToken ? { BC_JOIN_TOKEN: options.siteJoinToken } : {}),
        ...(options.siteJoinCreds ? { BC_JOIN_CREDS: options.siteJoinCreds } : {}),
      };
      const started = spawn('ip', args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      writeFileSync(pidFile, `${started.pid}\n`);
      started.once('exit', (code, signal) => {
        if (!killedOnPurpose.has(started)) for (const listener of crashListeners) listener(code, signal);
      });
      const keep = (chunk: Buffer) => appendFileSync(logFile, chunk);
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
    },
    async kill(signal = 'SIGKILL') {
      if (!child) return;
      // `ip netns exec` execs the command: the pid is bcd's own, so the signal reaches bcd itself.
      const running = child;
      killedOnPurpose.add(running);
      running.kill(signal);
      // A graceful stop that hangs (NATS unreachable while draining) still ends: the site is torn down after it.
      const force = setTimeout(() => running.kill('SIGKILL'), 8_000);
      await exited(running);
      clearTimeout(force);
    },
  };
}

/**
 * An emulated site on a network the caller made (`createSiteNetwork`): the LAN's dnsmasq, N QEMU VMs (TCG unless
 * `accel` says KVM, BIOS, one tap each) behind one VM-backed BMC on the host end of the uplink, and `bcd site` serving
 * their boot path.
 */
export async function startEmulatedSite(options: EmulatedSiteOptions): Promise<EmulatedSite> {
  const { net, runDir, log } = options;
  mkdirSync(runDir, { recursive: true });
  const children: ChildProcess[] = [];
  const dnsmasq = startLanDhcp(net, runDir);
  children.push(dnsmasq);
  const dnsmasqLog = join(runDir, 'dnsmasq.log');
  writeFileSync(dnsmasqLog, '');
  dnsmasq.stdout?.on('data', (c: Buffer) => appendFileSync(dnsmasqLog, c));
  dnsmasq.stderr?.on('data', (c: Buffer) => appendFileSync(dnsmasqLog, c));

  const machines: EmulatedMachine[] = [];
  for (let i = 1; i <= options.machines; i++) {
    const id = `${options.siteId}-vm${i}`;
    const tap = `${net.name}t${i}`;
    addTap(net, tap);
    const disk = join(runDir, `${id}-disk0.raw`);
    writeFileSync(disk, '');
    truncateSync(disk, (options.diskMiB ?? DEFAULT_DISK_MIB) << 20);
    const disks: { file: string; serial: string; hiddenFromBmc?: boolean }[] = [{ file: disk, serial: `EMU-${i}-D0` }];
    const hiddenMiB = options.hiddenDiskMiB?.(i);
    if (hiddenMiB !== undefined) {
      const hidden = join(runDir, `${id}-disk1.raw`);
      writeFileSync(hidden, '');
      truncateSync(hidden, hiddenMiB << 20);
      disks.push({ file: hidden, serial: `EMU-${i}-D1`, hiddenFromBmc: true });
    }
    const mac = macOf();
    const uuid = randomUUID();
    const system = new VmSystem({
      id,
      config: {
        name: id,
        uuid,
        cpus: 1,
        memoryMiB: options.memoryMiB ?? 1024,
        firmware: 'bios',
        nics: [{ mac, tap }],
        disks,
        runDir: join(runDir, id),
        accel: options.accel ?? 'tcg',
        ...(options.diskCache ? { diskCache: options.diskCache } : {}),
      },
      netns: net.netns,
      log,
    });
    await system.refreshDiskSizes();
    const resets: SystemResetType[] = [];
    const reset = system.reset.bind(system);
    system.reset = async (type) => {
      await reset(type);
      resets.push(type);
    };
    machines.push({ id, uuid, mac, disk, disks: disks.map((d) => d.file), bmcAddress: '', system, resets });
  }
  const bmc = await startVmBmc({ systems: machines.map((m) => m.system), username: EMULATED_BMC.username, password: EMULATED_BMC.password, host: net.hostIp });
  for (const m of machines) m.bmcAddress = bmc.systemUrl(m.id);

  const credentialsFile = join(runDir, 'bmc-credentials.json');
  writeFileSync(credentialsFile, JSON.stringify({ [EMULATED_BMC.credentialsRef]: { username: EMULATED_BMC.username, password: EMULATED_BMC.password } }), {
    mode: 0o600,
  });
  const bcdSite = bcdSiteProcess(options, credentialsFile, machines);
  bcdSite.start();

  return {
    net,
    bmc,
    machines,
    bcdSite,
    siteUrl: `http://${net.siteIp}:${options.httpPort ?? 8080}`,
    stop: async () => {
      await Promise.all(machines.map((m) => m.system.close().catch(() => undefined)));
      await bcdSite.kill('SIGTERM').catch(() => undefined);
      await bmc.close().catch(() => undefined);
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map(exited));
    },
  };
}
