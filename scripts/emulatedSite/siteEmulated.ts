/**
 * `npm run site:emulated -- --machines N [--site <id>]`: an emulated site against the stack `npm start` runs (found
 * through `<BC_DATA_DIR>/stack.json`). It makes the site's namespaces, bridge and uplink, N QEMU VMs behind one
 * VM-backed BMC and `bcd site` on the bridge (joined with a site token, then restarted on its own kept credentials
 * whenever it exits), relays NATS from the uplink to the stack's server, and enrols the machines; the CLI deploys and
 * releases them from there. Ctrl-C removes everything it made but the logs.
 * Needs root and the Debian packages in scripts/emulatedSite/requiredPackages.txt.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { readStackRecord } from '../../services/platform/stackRecord.ts';
import { buildDirs, repoRoot } from './buildOutput.ts';
import { buildRamdisk } from './buildRamdisk.ts';
import { emulatedAccel } from './accel.ts';
import { requireTools } from './hostTools.ts';
import { createSiteNetwork, destroySiteNetwork, type SiteNetwork } from './siteNetwork.ts';
import { enrolEmulatedMachines, startSiteOnStack, type StackSite } from './stackSite.ts';
import { DEFAULT_DISK_MIB } from './emulatedSite.ts';

const fail = (message: string): never => {
  process.stderr.write(`site:emulated: ${message}\n`);
  process.exit(1);
};

const { values } = parseArgs({
  options: {
    machines: { type: 'string', default: '2' },
    site: { type: 'string', default: 'emu' },
    'disk-mib': { type: 'string', default: String(DEFAULT_DISK_MIB) },
    // Fixed, so the stack can be started knowing where its machines reach it (BC_AGENT_NATS_URL, BC_PUBLIC_URL).
    octet: { type: 'string' },
    // tcg (default) or kvm; BC_EMULATED_ACCEL when not given.
    accel: { type: 'string' },
  },
});
const octet = values.octet === undefined ? randomInt(16, 250) : Number(values.octet);
if (!Number.isInteger(octet) || octet < 16 || octet > 250) fail('--octet must be 16-250');
const machines = Number(values.machines);
if (!Number.isInteger(machines) || machines < 1 || machines > 16) fail('--machines must be 1-16');
const siteId = values.site;
if (!/^[a-z0-9][a-z0-9_-]{0,30}$/.test(siteId)) fail('--site must be a lower-case id');
const accel = (() => {
  try {
    return emulatedAccel(values.accel);
  } catch (err) {
    return fail((err as Error).message);
  }
})();
if (process.getuid?.() !== 0) fail('the emulated site makes network namespaces, a bridge and taps: run it as root');
requireTools(['qemu-system-x86_64', 'dnsmasq', 'ip', 'sysctl']);
if (!existsSync('/usr/lib/ipxe/undionly.kpxe')) fail("Debian's ipxe package is missing (scripts/emulatedSite/requiredPackages.txt)");

const dataDir = resolve(repoRoot, process.env.BC_DATA_DIR ?? '.data');
const stack = readStackRecord(dataDir) ?? fail(`no stack record in ${dataDir}: start the stack with \`npm start\` first`);
const adminToken = readAdminToken(dataDir) ?? fail(`no admin token in ${dataDir}`);
const log = createLogger('site-emulated', process.env.BC_LOG_LEVEL ?? 'info');
const access = { record: stack, adminToken };

const ramdiskDir = buildDirs('ramdisk').outDir;
if (!existsSync(join(ramdiskDir, 'initrd.img'))) {
  log.info({ ramdiskDir }, 'building the ramdisk first (npm run build:ramdisk)');
  await buildRamdisk(ramdiskDir, buildDirs('ramdisk').cacheDir);
}

const runDir = mkdtempSync(join(tmpdir(), `bc-site-${siteId}-`));
let net: SiteNetwork | undefined;
let stackSite: StackSite | undefined;
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  log.info('stopping the emulated site');
  await stackSite?.stop().catch((err: unknown) => log.warn({ err }, 'emulated site did not stop cleanly'));
  if (net) destroySiteNetwork(net);
  removeAllButLogs(runDir);
  process.stdout.write(`The serial logs of the VMs, bcd site's and dnsmasq's are kept in ${runDir}.\n`);
  process.exit(code);
};

/** Disks, fetched media, state and credentials go; the logs stay for a look at what happened. */
function removeAllButLogs(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      removeAllButLogs(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
    } else if (!entry.name.endsWith('.log')) rmSync(path, { force: true });
  }
}
process.once('SIGINT', () => void stop(0));
process.once('SIGTERM', () => void stop(0));

try {
  net = createSiteNetwork(`emu${randomBytes(3).toString('hex')}`, octet);
  // Machines and bcd site reach NATS on the host end of the uplink (relayed: the stack's server listens on loopback).
  stackSite = await startSiteOnStack(access, {
    siteId,
    machines,
    net,
    runDir,
    ramdiskDir,
    diskMiB: Number(values['disk-mib']),
    accel,
    natsRelayPort: 4222,
    log,
  });
  const site = stackSite.site;
  // Supervised: a bcd site that exits on its own (a crash) is started again, on the membership it kept (no token).
  // Ctrl-C stops it through `site.stop()`, which is no crash.
  const supervised = site.bcdSite;
  supervised.onCrash((code, signal) => {
    if (stopping) return;
    log.warn({ code, signal, log: supervised.logFile }, 'bcd site exited; starting it again in 2 s');
    setTimeout(() => stopping || supervised.start(), 2_000);
  });
  await enrolEmulatedMachines(access, site, siteId);
  process.stdout.write(
    [
      '',
      `Emulated site ${siteId} is up: ${machines} VM(s) on bridge ${net.bridge} (namespace ${net.netns}), bcd site at ${site.siteUrl}.`,
      ...site.machines.map((vm) => `  ${vm.id}  mac ${vm.mac}  disk ${vm.disk}  serial log ${vm.system.vm.paths.serial}`),
      `bcd site log: ${site.bcdSite.logFile}. It is restarted whenever it exits, on the membership it keeps in`,
      `${site.bcdSite.stateDir} (no new token): \`kill $(cat ${site.bcdSite.pidFile})\` restarts it.`,
      // The deploy's node seed names the stack's agent NATS URL and is fetched from its public URL (a step artefact).
      `A deployed host's bcd node joins if the stack was started with BC_AGENT_NATS_URL=nats://${net.hostIp}:4222,`,
      `BC_HTTP_HOST=0.0.0.0 and BC_PUBLIC_URL=http://${net.hostIp}:<api port> (start this command with --octet ${octet}).`,
      'Deploy and release them like any machine, e.g.:',
      `  npm run cli -- metal deploy ${site.machines[0]!.id} --image <url> --sha256 <sha256> --wait`,
      `  npm run cli -- metal release ${site.machines[0]!.id} --wait`,
      'Ctrl-C stops the VMs and bcd site and removes the namespaces.',
      '',
    ].join('\n'),
  );
} catch (err) {
  log.error({ err }, 'the emulated site did not start');
  await stop(1);
}
