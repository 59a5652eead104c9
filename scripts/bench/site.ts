import { randomBytes, randomInt } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { createLogger } from '../../services/platform/logger.ts';
import { emulatedAccel } from '../emulatedSite/accel.ts';
import { buildDirs, repoRoot } from '../emulatedSite/buildOutput.ts';
import { buildImage } from '../emulatedSite/buildImage.ts';
import { buildRamdisk } from '../emulatedSite/buildRamdisk.ts';
import { createSiteNetwork, destroySiteNetwork, type SiteNetwork } from '../emulatedSite/siteNetwork.ts';
import { enrolEmulatedMachines, startSiteOnStack, type StackSite } from '../emulatedSite/stackSite.ts';
import { apiClient } from '../../test/support/apiClient.ts';
import { openReadModel } from '../../test/support/readModelDb.ts';
import { startStackForSite } from '../../test/emulatedSite/siteStack.ts';
import { ReferenceSampler } from './referenceWork.ts';
import { machineInfo } from './report.ts';
import { bootSamples, median, round, siteFigures, type BootSample, type StepRow } from './site/figures.ts';

/**
 * `npm run bench:site -- [--machines N] [--disk-mib M] [--samples S] [--accel tcg|kvm] [--out FILE] [--quick]`: N emulated
 * machines (QEMU VMs behind the VM-backed BMC, network-booted by `bcd site`), against `npm start` in operator mode
 * the way the emulated site's README runs it (API and agent NATS on the uplink's host end), are deployed with the
 * built image and released, all at once. Each ramdisk boot first runs `ramdisk-bench.js` (S samples): dd and the
 * project's writer, image write and wipe on the same device with the same bytes, page cache dropped, disks
 * `cache=none`. Reported: those figures and the real `image.write` / `disk.wipe` steps beside dd, boot → ramdisk
 * joined, `metal.deploy` → `deployed`. Writes bench/results/site.json. Root and the emulated site's packages needed.
 * `--quick` checks the wiring: one machine, enrolled to be inspected in band, so its one ramdisk boot runs the in-boot
 * samples; no deploy or release; written to bench/results/site-quick.json unless `--out` says otherwise.
 */
const { values } = parseArgs({
  options: {
    machines: { type: 'string' },
    // The host image (with cloud-init) is 341 MiB: dd and the writer put all of it on the disk.
    'disk-mib': { type: 'string', default: '512' },
    'memory-mib': { type: 'string', default: '1536' },
    samples: { type: 'string', default: '1' },
    accel: { type: 'string' },
    out: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
const quick = values.quick;
const machines = Number(values.machines ?? (quick ? 1 : 2));
const outFile = values.out ?? (quick ? 'bench/results/site-quick.json' : 'bench/results/site.json');
const diskMiB = Number(values['disk-mib']);
const memoryMiB = Number(values['memory-mib']);
const samplesPerBoot = Number(values.samples);
const accel = emulatedAccel(values.accel);
const log = createLogger('bench-site', 'warn');
const scratch = mkdtempSync(join(tmpdir(), 'bc-site-bench-'));
const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
// How fast the machine ran (bench/README.md, "Machine speed"): sampled at the start, every minute and at the end.
const reference = new ReferenceSampler(60_000);
let net: SiteNetwork | undefined;
let stackSite: StackSite | undefined;
let stack: Awaited<ReturnType<typeof startStackForSite>> | undefined;
let closeImageServer = () => undefined as void;
let exitCode = 0;

const natsVersion = () => {
  try {
    return execFileSync('nats-server', ['--version']).toString().trim();
  } catch {
    return 'unknown';
  }
};
const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

try {
  const started = Date.now();
  const [, image] = await Promise.all([
    buildRamdisk(join(scratch, 'ramdisk'), buildDirs('ramdisk').cacheDir),
    buildImage(join(scratch, 'image'), buildDirs('image').cacheDir),
  ]);
  net = createSiteNetwork(`emu${randomBytes(3).toString('hex')}`, randomInt(16, 250));
  const dataDir = join(scratch, 'data');
  stack = await startStackForSite(net, dataDir);
  const client = apiClient(stack.api, stack.access.adminToken);
  const imageServer = createServer((req, res) => {
    if (req.url !== '/disk.raw') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': statSync(image.image).size });
    createReadStream(image.image).pipe(res);
  });
  await new Promise<void>((ok) => imageServer.listen(0, net!.hostIp, () => ok()));
  closeImageServer = () => void imageServer.close();
  const imageUrl = `http://${net.hostIp}:${(imageServer.address() as AddressInfo).port}/disk.raw`;
  stackSite = await startSiteOnStack(stack.access, {
    siteId: 'bench',
    machines,
    net,
    runDir: join(scratch, 'site'),
    ramdiskDir: join(scratch, 'ramdisk'),
    diskMiB,
    memoryMiB,
    accel,
    diskCache: 'none',
    ramdiskArgs: `bc.benchimage=${imageUrl} bc.benchsamples=${samplesPerBoot}`,
    natsRelayPort: stack.natsRelayPort,
    log,
  });
  const site = stackSite.site;
  await enrolEmulatedMachines(stack.access, site, 'bench', { inspectInBand: quick });
  for (const vm of site.machines) {
    for (const until = Date.now() + 1_200_000; ; await new Promise((r) => setTimeout(r, 1_000))) {
      const node = (await client.node(vm.id).catch(() => undefined)) as { state: string; inventoryFindings: unknown } | undefined;
      if (node?.state === 'ready' && (!quick || node.inventoryFindings !== null)) break;
      if (Date.now() > until) throw new Error(`${vm.id} is not ready (and inspected) after 20 minutes: ${node?.state}`);
    }
  }
  console.log(`${machines} machines ready after ${Math.round((Date.now() - started) / 1000)} s (builds, stack, site, inspection)`);

  // A power cycle starts a new QEMU and with it a new serial log: the in-boot samples are collected as they appear.
  const samples = new Map<string, BootSample>();
  const collect = () => {
    for (const vm of site.machines) {
      const serial = (() => {
        try {
          return readFileSync(vm.system.vm.paths.serial, 'latin1');
        } catch {
          return '';
        }
      })();
      for (const s of bootSamples(serial)) samples.set(`${vm.id} ${s.fetchSeconds} ${s.sample}`, s);
    }
  };
  const collector = setInterval(collect, 2_000);

  const t0 = Date.now();
  const deployed: number[] = [];
  if (!quick) await deployAndRelease();
  async function deployAndRelease() {
    for (const vm of site.machines) {
      const res = await client.command('metal.deploy', { nodeId: vm.id, imageUrl, imageSha256: image.sha256, role: 'host', sshKeys: [] });
      if (res.status !== 201) throw new Error(`deploy ${vm.id}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    await Promise.all(
      site.machines.map(async (vm) => {
        await client.waitForNodeState(vm.id, 'deployed', 1_800_000, 1_000);
        deployed.push((Date.now() - t0) / 1000);
      }),
    );
    console.log(`  deployed all in ${round((Date.now() - t0) / 1000, 1)} s`);
    for (const vm of site.machines) {
      const res = await client.command('metal.undeploy', { nodeId: vm.id });
      if (res.status !== 201) throw new Error(`release ${vm.id}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    await Promise.all(site.machines.map((vm) => client.waitForNodeState(vm.id, 'ready', 1_800_000, 1_000)));
  }
  clearInterval(collector);
  collect();
  console.log(`  released all; ${samples.size} in-boot samples; ${Math.round((Date.now() - started) / 1000)} s in all`);

  using db = openReadModel(dataDir, 'workflows');
  const steps = db
    .prepare(
      `SELECT w.node_id AS nodeId, w.operation, w.started_at AS wfStarted, w.ended_at AS wfEnded, s.step_id AS stepId,
              s.started_at AS startedAt, s.ended_at AS endedAt, s.output
         FROM workflows w JOIN workflow_steps s USING (workflow_id)
        WHERE w.operation IN ('deploy', 'release') ORDER BY w.node_id, w.started_at, s.step_index`,
    )
    .all() as (StepRow & { wfStarted: string; wfEnded: string })[];
  const bootToJoined: number[] = [];
  const deployToDeployed: number[] = [];
  for (const vm of site.machines) {
    for (const operation of ['deploy', 'release']) {
      const own = steps.filter((s) => s.nodeId === vm.id && s.operation === operation);
      const cycle = own.find((s) => s.stepId === 'power.set');
      const joined = own.find((s) => s.stepId === 'wait.agentJoined');
      if (cycle && joined) bootToJoined.push(seconds(cycle.endedAt, joined.endedAt));
      if (operation === 'deploy' && own[0]) deployToDeployed.push(seconds(own[0].wfStarted, own[0].wfEnded));
    }
  }
  const all = [...samples.values()];
  if (all.length === 0) throw new Error('no in-boot sample was printed on any serial console (ramdisk-bench.js)');
  const result = {
    bench: 'site',
    at: new Date().toISOString(),
    machine: machineInfo(natsVersion(), loadAtStart, reference.stop()),
    setup: {
      machines,
      vm: { accel, cpus: 1, memoryMiB, firmware: 'bios', diskMiB, diskCache: 'none' },
      stack: 'npm start, operator mode (broker auth)',
      ...(quick ? { quick: 'one ramdisk boot (in-band inspection), no deploy or release' } : {}),
      imageBytes: image.sizeBytes,
      inBootSamples: all.length,
    },
    ...siteFigures(all, steps),
    bootToRamdiskJoinedSeconds: {
      median: round(median(bootToJoined)),
      samples: bootToJoined.map((x) => round(x)),
      note: 'includes the in-boot bench, which runs before bcd ramdisk starts',
    },
    deployToDeployedSeconds: {
      median: round(median(deployToDeployed)),
      samples: deployToDeployed.map((x) => round(x)),
      allDeployedSeconds: deployed.length ? round(Math.max(...deployed)) : null,
    },
    totalSeconds: Math.round((Date.now() - started) / 1000),
  };
  const out = join(repoRoot, outFile);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await stackSite?.stop().catch(() => undefined);
  await stack?.process.stop().catch(() => undefined);
  closeImageServer();
  if (net) destroySiteNetwork(net);
  if (process.env.BC_KEEP_EMULATED_SITE !== '1') rmSync(scratch, { recursive: true, force: true });
}
process.exit(exitCode);
