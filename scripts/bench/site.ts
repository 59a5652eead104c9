import { randomBytes, randomInt } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync, spawn } from 'node:child_process';
import { allProjections } from '../../projections/catalog.ts';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { buildDirs, repoRoot } from '../emulatedSite/buildOutput.ts';
import { buildImage } from '../emulatedSite/buildImage.ts';
import { buildRamdisk } from '../emulatedSite/buildRamdisk.ts';
import { EMULATED_BMC, startEmulatedSite, type EmulatedSite } from '../emulatedSite/emulatedSite.ts';
import { createSiteNetwork, destroySiteNetwork, type SiteNetwork } from '../emulatedSite/siteNetwork.ts';
import { apiClient } from '../../test/support/apiClient.ts';
import { freePort } from '../../test/support/freePort.ts';
import { openReadModel } from '../../test/support/readModelDb.ts';
import { startServeProcess, type ServeProcess } from '../../test/support/serveProcess.ts';
import { machineInfo } from './report.ts';

/**
 * `npm run bench:site -- [--machines N] [--disk-mib M]`: N emulated machines (QEMU TCG VMs behind the VM-backed BMC,
 * network-booted by `bcd site`) are deployed with the built image and released, all at once. Per machine: boot to
 * ramdisk-joined (the power cycle's end to `wait.agentJoined`'s), image-write and wipe MB/s on /dev/vda, each beside
 * a plain `dd` of zeros to the same device in the same boot (`bc.ddbench`: buffered + fsync, as bcd writes), and
 * `metal.deploy` to `deployed`. Writes bench/results/site.json. Root and the emulated site's packages are needed.
 */
const { values } = parseArgs({ options: { machines: { type: 'string', default: '4' }, 'disk-mib': { type: 'string', default: '256' } } });
const machines = Number(values.machines);
const diskMiB = Number(values['disk-mib']);
const DD_MIB = 64;
const log = createLogger('bench-site', 'warn');
const scratch = mkdtempSync(join(tmpdir(), 'bc-site-bench-'));
const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
let net: SiteNetwork | undefined;
let site: EmulatedSite | undefined;
let stack: ServeProcess | undefined;
const children: { kill(): void }[] = [];

const natsVersion = () => {
  try {
    return execFileSync('nats-server', ['--version']).toString().trim();
  } catch {
    return 'unknown';
  }
};
const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** The ramdisk init's `dd baseline <disk> <MiB> MiB in <s> s` lines, as MB/s. */
function ddRates(serial: string): number[] {
  return [...serial.matchAll(/dd baseline \S+ (\d+) MiB in ([\d.]+) s/g)].map((m) => (Number(m[1]) * 1048576) / Number(m[2]) / 1e6);
}

try {
  const started = Date.now();
  const [ramdisk, image] = await Promise.all([
    buildRamdisk(join(scratch, 'ramdisk'), buildDirs('ramdisk').cacheDir),
    buildImage(join(scratch, 'image'), buildDirs('image').cacheDir),
  ]);
  net = createSiteNetwork(`emu${randomBytes(3).toString('hex')}`, randomInt(16, 250));
  const natsPort = await freePort();
  const nats = spawn('nats-server', ['-a', net.hostIp, '-p', String(natsPort), '-js', '-sd', join(scratch, 'nats')], { stdio: 'ignore' });
  children.push(nats);
  const natsUrl = `nats://${net.hostIp}:${natsPort}`;
  const imageServer = createServer((req, res) => {
    if (req.url !== '/disk.raw') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': statSync(image.image).size });
    createReadStream(image.image).pipe(res);
  });
  await new Promise<void>((ok) => imageServer.listen(0, net!.hostIp, () => ok()));
  children.push({ kill: () => imageServer.close() });
  const imageUrl = `http://${net.hostIp}:${(imageServer.address() as AddressInfo).port}/disk.raw`;
  const dataDir = join(scratch, 'data');
  const httpPort = await freePort();
  const services = ['api', 'commands', 'join', ...allProjections.map((p) => `projector:${p.name}`), 'workflow-orchestrator', 'workflow-executor'];
  stack = await startServeProcess(services, { BC_NATS_URL: natsUrl, BC_NATS_AUTH: 'none', BC_DATA_DIR: dataDir, BC_HTTP_PORT: String(httpPort) }, 300_000);
  const client = apiClient(`http://127.0.0.1:${httpPort}`, readAdminToken(dataDir) ?? '');
  site = await startEmulatedSite({
    siteId: 'bench',
    machines,
    natsUrl,
    net,
    runDir: join(scratch, 'site'),
    ramdiskDir: join(scratch, 'ramdisk'),
    diskMiB,
    ramdiskArgs: `bc.ddbench=${DD_MIB}`,
    log,
  });
  await client.command('site.create', { siteId: 'bench', name: 'Bench site' });
  for (const vm of site.machines) {
    const res = await client.command('metal.enroll', {
      nodeId: vm.id,
      siteId: 'bench',
      bmc: { address: vm.bmcAddress, credentialsRef: EMULATED_BMC.credentialsRef },
      hardwareProfile: 'emulated-qemu',
      macs: [vm.mac],
    });
    if (res.status !== 201) throw new Error(`enrol ${vm.id}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  for (const vm of site.machines) await client.waitForNodeState(vm.id, 'ready', 300_000, 500);
  console.log(`${machines} machines ready after ${Math.round((Date.now() - started) / 1000)} s (builds, control plane, site, inspection)`);

  const dd: number[] = [];
  const deployed: Record<string, number> = {};
  const t0 = Date.now();
  await Promise.all(
    site.machines.map((vm) => client.command('metal.deploy', { nodeId: vm.id, imageUrl, imageSha256: image.sha256, role: 'host', sshKeys: [] })),
  );
  await Promise.all(
    site.machines.map(async (vm) => {
      await client.waitForNodeState(vm.id, 'deployed', 1_800_000, 1_000);
      deployed[vm.id] = (Date.now() - t0) / 1000;
    }),
  );
  console.log(`  deployed all in ${round((Date.now() - t0) / 1000, 1)} s`);
  // The deploy's final power cycle booted the host: the ramdisk's serial output is gone, so dd is read at release.
  await Promise.all(site.machines.map((vm) => client.command('metal.undeploy', { nodeId: vm.id })));
  await Promise.all(site.machines.map((vm) => client.waitForNodeState(vm.id, 'ready', 1_800_000, 1_000)));
  for (const vm of site.machines) dd.push(...ddRates(readFileSync(vm.system.vm.paths.serial, 'latin1')));
  console.log(`  released all; ${Math.round((Date.now() - started) / 1000)} s in all`);

  using db = openReadModel(dataDir, 'workflows');
  const steps = db
    .prepare(
      `SELECT w.node_id AS nodeId, w.operation, w.started_at AS wfStarted, w.ended_at AS wfEnded, s.step_index AS i, s.step_id AS stepId, s.started_at AS startedAt, s.ended_at AS endedAt, s.output
                FROM workflows w JOIN workflow_steps s USING (workflow_id) WHERE w.operation IN ('deploy', 'release') ORDER BY w.node_id, w.started_at, s.step_index`,
    )
    .all() as {
    nodeId: string;
    operation: string;
    wfStarted: string;
    wfEnded: string;
    i: number;
    stepId: string;
    startedAt: string;
    endedAt: string;
    output: string | null;
  }[];
  const bootToJoined: number[] = [];
  const imageRate: number[] = [];
  const wipeRate: number[] = [];
  const deployToDeployed: number[] = [];
  for (const vm of site.machines) {
    for (const operation of ['deploy', 'release']) {
      const own = steps.filter((s) => s.nodeId === vm.id && s.operation === operation);
      const cycle = own.find((s) => s.stepId === 'power.set');
      const joined = own.find((s) => s.stepId === 'wait.agentJoined');
      if (cycle && joined) bootToJoined.push(seconds(cycle.endedAt, joined.endedAt));
      for (const s of own) {
        const out = s.output ? JSON.parse(s.output) : {};
        if (s.stepId === 'image.write') imageRate.push(out.bytesWritten / seconds(s.startedAt, s.endedAt) / 1e6);
        if (s.stepId === 'disk.wipe')
          wipeRate.push(out.disks.reduce((n: number, d: { sizeBytes: number }) => n + d.sizeBytes, 0) / seconds(s.startedAt, s.endedAt) / 1e6);
      }
      if (operation === 'deploy' && own[0]) deployToDeployed.push(seconds(own[0].wfStarted, own[0].wfEnded));
    }
  }
  const ddMedian = median(dd);
  const result = {
    bench: 'site',
    at: new Date().toISOString(),
    machine: machineInfo(natsVersion(), loadAtStart),
    setup: { machines, vm: { accel: 'tcg', cpus: 1, memoryMiB: 1024, firmware: 'bios', diskMiB }, imageBytes: image.sizeBytes, ddMiB: DD_MIB },
    bootToRamdiskJoinedSeconds: { median: round(median(bootToJoined)), samples: bootToJoined.map((x) => round(x)) },
    imageWrite: {
      medianMBps: round(median(imageRate)),
      ddMedianMBps: round(ddMedian),
      ratio: round(median(imageRate) / ddMedian),
      note: 'bcd: fetch from the site cache + write + fsync + read-back hash; dd: zeros, 1 MiB blocks, fsync',
    },
    wipe: {
      medianMBps: round(median(wipeRate)),
      ddMedianMBps: round(ddMedian),
      ratio: round(median(wipeRate) / ddMedian),
      note: 'bcd: zeros + fsync + verifying read of every byte',
    },
    deployToDeployedSeconds: {
      median: round(median(deployToDeployed)),
      samples: deployToDeployed.map((x) => round(x)),
      allDeployedSeconds: round(Math.max(...Object.values(deployed))),
    },
    ddSamplesMBps: dd.map((x) => round(x)),
    totalSeconds: Math.round((Date.now() - started) / 1000),
  };
  const out = join(repoRoot, 'bench/results/site.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
} finally {
  await site?.stop().catch(() => undefined);
  await stack?.stop().catch(() => undefined);
  for (const child of children) child.kill();
  if (net) destroySiteNetwork(net);
  rmSync(scratch, { recursive: true, force: true });
}
