import { execFile, spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { buildDirs } from '../../scripts/emulatedSite/buildOutput.ts';
import { buildImage } from '../../scripts/emulatedSite/buildImage.ts';
import { buildRamdisk } from '../../scripts/emulatedSite/buildRamdisk.ts';
import { EMULATED_BMC, startEmulatedSite, type EmulatedMachine, type EmulatedSite } from '../../scripts/emulatedSite/emulatedSite.ts';
import { requireTools } from '../../scripts/emulatedSite/hostTools.ts';
import { createSiteNetwork, destroySiteNetwork, type SiteNetwork } from '../../scripts/emulatedSite/siteNetwork.ts';
import { journalRows } from '../support/agentEvidence.ts';
import { readPrefix } from '../support/diskFile.ts';
import { apiClient } from '../support/apiClient.ts';
import { workflowSteps } from '../support/deployEvidence.ts';
import { freePort } from '../support/freePort.ts';
import { openReadModel } from '../support/readModelDb.ts';
import { startServeProcess, type ServeProcess } from '../support/serveProcess.ts';
import { TestProcesses, waitForLog } from './harness.ts';
import { nodeAgentPulling, stepTimings } from './hostEvidence.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The emulated site end to end: two QEMU VMs (TCG, BIOS) behind one VM-backed BMC, on a bridge in a network namespace
 * with the LAN's own dnsmasq, network-boot through `bcd site` (ProxyDHCP, iPXE, the HTTP chain) into the built
 * ramdisk, which joins NATS over the site network, writes the built image to /dev/vda and wipes it again on release.
 * The control plane runs as `serve.ts` processes on the host, NATS on the host end of the site's uplink.
 */
const siteId = 'emu';
const scratch = mkdtempSync(join(tmpdir(), 'emusite-e2e-'));
const name = `emu${randomBytes(3).toString('hex')}`;
const log = createLogger('emulated-site-e2e', 'warn');
const processes = new TestProcesses();
const controlPlane = ['api', 'commands', 'join', 'projectors', 'workflow-orchestrator', 'workflow-executor'];
let net: SiteNetwork | undefined;
let site: EmulatedSite | undefined;
let stack: ServeProcess | undefined;
let imageServer: Server | undefined;
let nc: NatsConnection | undefined;
let dataDirOfRun: string | undefined;

const attestedWipesPerRelease = `
  SELECT w.workflow_id AS workflowId, w.node_id AS nodeId,
         (SELECT count(*) FROM workflow_steps s
           WHERE s.workflow_id = w.workflow_id AND s.step_id = 'disk.wipe' AND s.state = 'succeeded'
             AND json_extract(s.output, '$.attested') = 1) AS attestedWipes
    FROM workflows w
   WHERE w.operation = 'release' AND w.state = 'completed'
   ORDER BY w.started_at`;

/** True when every byte of the file is zero (read from the host side, in 4 MiB pieces). */
async function allZero(file: string): Promise<boolean> {
  for await (const chunk of createReadStream(file, { highWaterMark: 4 << 20 }) as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i += 8) if (chunk.readBigUInt64LE(i) !== 0n) return false;
  }
  return true;
}

/** The image's MBR gap and FAT boot partition (1 + 32 MiB): nothing the booted host writes to. */
const BOOT_PREFIX = 33 << 20;
const prefixEquals = (file: string, expected: Buffer): boolean => readPrefix(file, expected.length).equals(expected);

/** What `bcd site` answers a DHCPDISCOVER from `mac`, sent by a PXE client on the LAN (the LAN DHCP server's namespace). */
async function probeDhcp(lanNetns: string, mac: string): Promise<{ from: string; siaddr: string; file: string }[]> {
  const { stdout } = await promisify(execFile)(
    'ip',
    ['netns', 'exec', lanNetns, process.execPath, '--import', 'tsx', 'test/emulatedSite/dhcpProbe.ts', mac, '4000'],
    { cwd: join(import.meta.dirname, '../..') },
  );
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe('emulated site: real VMs network-boot, deploy and wipe through bcd site', () => {
  beforeAll(() => {
    // Installing is .ci/run's job (scripts/emulatedSite/requiredPackages.txt); here a missing tool is a clear failure.
    requireTools([
      'qemu-system-x86_64',
      'dnsmasq',
      'ip',
      'sysctl',
      'nats-server',
      'cpio',
      'depmod',
      'dpkg-deb',
      'apt-get',
      'mke2fs',
      'syslinux',
      'mcopy',
      'sfdisk',
    ]);
    if (!existsSync('/usr/lib/ipxe/undionly.kpxe')) throw new Error('Debian ipxe is missing: install scripts/emulatedSite/requiredPackages.txt');
  });

  afterAll(async () => {
    // Where the time went, step by step (also after a failure or a timeout).
    if (dataDirOfRun)
      process.stdout.write(
        `emulated site e2e step timings:\n${(() => {
          try {
            return stepTimings(dataDirOfRun);
          } catch (err) {
            return String(err);
          }
        })()}\n`,
      );
    await nc?.close();
    await site?.stop();
    await stack?.stop();
    imageServer?.close();
    await processes.stopAll();
    if (net) destroySiteNetwork(net);
    // BC_KEEP_EMULATED_SITE=1 keeps the VMs' serial logs, bcd site's and dnsmasq's for a look after a failure.
    if (process.env.BC_KEEP_EMULATED_SITE !== '1') rmSync(scratch, { recursive: true, force: true });
  }, 120_000);

  it(
    'enrols 2 VMs through one BMC, inspects, deploys, releases to zeros, loops with one attested wipe each, survives kill -9 of bcd site, ignores strangers',
    { timeout: 1_500_000 },
    async () => {
      const started = Date.now();
      const [ramdisk, image] = await Promise.all([
        buildRamdisk(join(scratch, 'ramdisk'), buildDirs('ramdisk').cacheDir),
        buildImage(join(scratch, 'image'), buildDirs('image').cacheDir),
      ]);
      const imageBytes = readFileSync(image.image);

      net = createSiteNetwork(name, randomInt(16, 250));
      const natsPort = await freePort();
      processes.start('nats-server', ['-a', net.hostIp, '-p', String(natsPort), '-js', '-sd', join(scratch, 'nats')], join(scratch, 'nats.log'));
      const natsUrl = `nats://${net.hostIp}:${natsPort}`;
      await waitForLog('nats-server', join(scratch, 'nats.log'), /Server is ready/, 30_000);

      // The image source, on the host end of the uplink: the site caches it, the ramdisk fetches it from the site.
      imageServer = createServer((req, res) => {
        if (req.url !== '/disk.raw') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-length': statSync(image.image).size });
        createReadStream(image.image).pipe(res);
      });
      await new Promise<void>((ok) => imageServer!.listen(0, net!.hostIp, () => ok()));
      const imageUrl = `http://${net.hostIp}:${(imageServer.address() as { port: number }).port}/disk.raw`;

      const dataDir = join(scratch, 'data');
      dataDirOfRun = dataDir;
      const httpPort = await freePort();
      // The API on the host end of the uplink: bcd site fetches the deploy's node seed (a step artefact) from it.
      const apiUrl = `http://${net.hostIp}:${httpPort}`;
      stack = await startServeProcess(
        controlPlane,
        { BC_NATS_URL: natsUrl, BC_NATS_AUTH: 'none', BC_DATA_DIR: dataDir, BC_HTTP_PORT: String(httpPort), BC_HTTP_HOST: net.hostIp, BC_PUBLIC_URL: apiUrl },
        180_000,
      );
      const client = apiClient(apiUrl, readAdminToken(dataDir) ?? '');
      nc = await connectNats(natsUrl, 'emulated-site-e2e');
      /**
       * The deployed host booted its disk and its `bcd node` joined with the seed the deploy wrote: the node view
       * counts it connected, its durable has a pull waiting, and the host's init zeroed the spent seed.
       */
      const nodeJoined = async (vm: EmulatedMachine) => {
        await waitForLog(`${vm.id}'s bcd node joins`, vm.system.vm.paths.serial, /bc-host: seed wiped after joining/, 300_000);
        // connected: its bcd node's heartbeats reach the API (not merely: an agent of the node registered once).
        await expect.poll(async () => (await client.node(vm.id)).connected, { timeout: 60_000, interval: 1_000 }).toBe(true);
        // The agent pulls once its consumer loop is up, after it registered: inside a VM on a machine running the whole
        // suite, that took over a minute once.
        await expect.poll(() => nodeAgentPulling(nc!, siteId, vm.id), { timeout: 180_000, interval: 1_000 }).toBe(true);
        expect((await client.node(vm.id)).state).toBe('deployed');
      };

      site = await startEmulatedSite({
        siteId,
        machines: 2,
        natsUrl,
        net,
        runDir: join(scratch, 'site'),
        ramdiskDir: join(scratch, 'ramdisk'),
        diskMiB: 256,
        memoryMiB: 1024,
        log,
      });
      await waitForLog('bcd site', site.bcdSite.logFile, /network boot path listening/, 120_000);
      const [vm1, vm2] = site.machines as [EmulatedMachine, EmulatedMachine];
      // One BMC, two systems: the enrolled address names each.
      expect(vm1.bmcAddress).toBe(`${site.bmc.url}/redfish/v1/Systems/${vm1.id}`);
      expect(new URL(vm2.bmcAddress).origin).toBe(new URL(vm1.bmcAddress).origin);

      expect((await client.command('site.create', { siteId, name: 'Emulated site' })).status).toBe(201);
      for (const vm of site.machines) {
        const enrolled = await client.command('metal.enroll', {
          nodeId: vm.id,
          siteId,
          bmc: { address: vm.bmcAddress, credentialsRef: EMULATED_BMC.credentialsRef },
          hardwareProfile: 'emulated-qemu',
          macs: [vm.mac],
        });
        expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(201);
      }
      // Inspection reads each VM's own identity from the BMC.
      for (const vm of site.machines) {
        const node = await client.waitForNodeState(vm.id, 'ready', 120_000, 500);
        expect(node.inventory.productUuid).toBe(vm.uuid);
        expect(node.inventory.nics.map((n: { mac: string }) => n.mac)).toEqual([vm.mac]);
      }

      const deploy = async (vm: EmulatedMachine) => {
        const res = await client.command('metal.deploy', { nodeId: vm.id, imageUrl, imageSha256: image.sha256, role: 'host', sshKeys: [] });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        return res.body.events.find((e: { type: string }) => e.type === 'NodeOperationRequested').data.workflowId as string;
      };
      const release = async (vm: EmulatedMachine) => {
        const res = await client.command('metal.undeploy', { nodeId: vm.id });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
      };

      // Loop 1, both VMs at once: PXE → ramdisk → image on /dev/vda → boot from the disk; release → wipe → zeros.
      const firstDeploys = await Promise.all([deploy(vm1), deploy(vm2)]);
      for (const [i, vm] of site.machines.entries()) {
        await client.waitForNodeState(vm.id, 'deployed', 480_000, 1_000);
        // The ramdisk read the image back from /dev/vda; from the host side, the partition table and the boot partition
        // are the image's bytes (the root file system the booted host mounts changes at once).
        const written = workflowSteps(dataDir, firstDeploys[i]!).steps.find((s) => s.step_id === 'image.write');
        expect(JSON.parse(written!.output!)).toMatchObject({ disk: '/dev/vda', sha256: image.sha256, bytesWritten: imageBytes.length, verified: true });
        const seeded = workflowSteps(dataDir, firstDeploys[i]!).steps.find((s) => s.step_id === 'userdata.write');
        expect(JSON.parse(seeded!.output!)).toMatchObject({ seed: { written: true, disk: '/dev/vda', verified: true } });
        expect(prefixEquals(vm.disk, imageBytes.subarray(0, BOOT_PREFIX)), `${vm.id}: the image is on the disk`).toBe(true);
        // The final power cycle boots the VM from its own disk (the spent PXE override no longer applies).
        await waitForLog(`${vm.id} boots its disk`, vm.system.vm.paths.serial, /SYSLINUX/, 120_000);
      }
      await Promise.all(site.machines.map(nodeJoined));
      // Each deploy's last power cycle was seen happening (the VM BMC's LastResetTime), so no ForceOff + On booted the
      // host a second time under its agent's feet.
      for (const workflowId of firstDeploys) {
        const cycles = workflowSteps(dataDir, workflowId).steps.filter((st) => st.step_id === 'power.set');
        expect(cycles.map((st) => JSON.parse(st.output!) as { resetTypes: string[] }).flatMap((o) => o.resetTypes)).not.toContain('ForceOff');
      }
      const heardAtJoin = await Promise.all(site.machines.map(async (vm) => (await client.node(vm.id)).lastHeartbeat));
      const bootLog = readFileSync(site.bcdSite.logFile, 'utf8');
      expect(bootLog).toMatch(/network boot armed/);
      expect(bootLog).toMatch(/"boot":"http"/);

      // Alive all along, on the same agent process: no crash loop, no restart, no error since it joined.
      for (const [i, vm] of site.machines.entries()) {
        const now = await client.node(vm.id);
        expect(now).toMatchObject({ connected: true, lastHeartbeat: { agentId: `node-${vm.id}`, role: 'node', lastError: null } });
        expect(now.lastHeartbeat.startedAt).toBe(heardAtJoin[i].startedAt);
      }
      await Promise.all([release(vm1), release(vm2)]);
      for (const vm of site.machines) {
        await client.waitForNodeState(vm.id, 'ready', 480_000, 1_000);
        expect(await allZero(vm.disk), `${vm.id}: the disk behind /dev/vda reads back as zeros`).toBe(true);
      }

      // Loop 2, vm1: bcd site is killed with SIGKILL while the deploy waits for the ramdisk it PXE-booted, and restarted.
      const resetsBefore = vm1.resets.length;
      const workflowId = await deploy(vm1);
      // The serial log starts afresh with the power cycle's new QEMU: before it, it still holds the release's boot.
      await expect.poll(() => workflowSteps(dataDir, workflowId).steps[1]?.state, { timeout: 120_000, interval: 500 }).toBe('succeeded');
      await waitForLog('vm1 ramdisk /init', vm1.system.vm.paths.serial, /bc-init: ramdisk \/init started/, 300_000);
      await site.bcdSite.kill('SIGKILL');
      site.bcdSite.start();
      await client.waitForNodeState(vm1.id, 'deployed', 480_000, 1_000);
      expect(site.bcdSite.starts).toBe(2);
      const { state, steps } = workflowSteps(dataDir, workflowId);
      expect(state).toBe('completed');
      expect(steps.map((s) => [s.step_id, s.state, s.attempts])).toEqual(steps.map((s) => [s.step_id, 'succeeded', 1]));
      // The site agent's journal: each of the workflow's site commands once, finished ok; the BMC acted exactly as told.
      const journal = journalRows(site.bcdSite.stateDir).filter((r) => r.commandId.startsWith(`${workflowId}-s`));
      expect(new Set(journal.map((r) => r.commandId)).size).toBe(journal.length);
      expect(journal.filter((r) => r.destructive).map((r) => [r.kind, r.finished, r.ok])).toEqual([
        ['power.set', true, true],
        ['power.set', true, true],
      ]);
      const reported = steps.filter((s) => s.step_id === 'power.set').flatMap((s) => (JSON.parse(s.output!) as { resetTypes: string[] }).resetTypes);
      expect(vm1.resets.slice(resetsBefore)).toEqual(reported);
      expect(prefixEquals(vm1.disk, imageBytes.subarray(0, BOOT_PREFIX))).toBe(true);
      // The redeployed host's first boot loses its power at a random moment around its join (the BMC's ForceOff is
      // QEMU's end: the guest's page cache is gone), and is powered on again: its bcd node always comes back, joining
      // with the new deploy's seed (its old membership went with the wipe) or resuming the membership it kept.
      await waitForLog('vm1 starts bcd node', vm1.system.vm.paths.serial, /bc-host: starting bcd node/, 300_000);
      const cutAfterMs = randomInt(0, 20_000);
      await new Promise((r) => setTimeout(r, cutAfterMs));
      await vm1.system.reset('ForceOff');
      await vm1.system.reset('On');
      await nodeJoined(vm1).catch((err: unknown) => {
        throw new Error(`power cut ${cutAfterMs} ms after bcd node started: ${String(err)}`);
      });
      // Stopped (the host powered off), it is no longer connected once the window has passed, and nothing else happened.
      await vm1.system.reset('ForceOff');
      await expect.poll(async () => (await client.node(vm1.id)).connected, { timeout: 90_000, interval: 1_000 }).toBe(false);
      await vm1.system.reset('On');
      await nodeJoined(vm1);
      await release(vm1);
      await client.waitForNodeState(vm1.id, 'ready', 480_000, 1_000);
      expect(await allZero(vm1.disk)).toBe(true);

      // Three releases into ready, each with exactly one attested wipe, counted in SQL.
      const history = await client.getJson(`/v1/events?aggregate=metal.node/${vm1.id}`);
      const lastSeq = Math.max(...history.items.map((e: { seq: number }) => e.seq));
      await client.getJson(`/v1/nodes/${vm1.id}/workflows?minSeq=${lastSeq}&limit=1`);
      {
        using db = openReadModel(dataDir, 'workflows');
        const rows = db.prepare(attestedWipesPerRelease).all() as { nodeId: string; attestedWipes: number }[];
        expect(rows.map((r) => r.nodeId).sort()).toEqual([vm1.id, vm1.id, vm2.id]);
        expect(rows.filter((r) => r.attestedWipes !== 1)).toEqual([]);
      }

      // A DHCP request from a MAC no node has gets no PXE answer; the same request from vm1 (still armed from its
      // release's PXE boot) does, so the silence is the site's choice and not a deaf probe.
      const stranger = await probeDhcp(net.lanNetns, '52:54:00:de:ad:01');
      expect(stranger.filter((r) => r.from === net!.siteIp || r.siaddr === net!.siteIp)).toEqual([]);
      const known = await probeDhcp(net.lanNetns, vm1.mac);
      expect(known).toContainEqual(expect.objectContaining({ from: net.siteIp, file: 'undionly.kpxe' }));

      process.stdout.write(`emulated site e2e: ${Math.round((Date.now() - started) / 1000)} s\n`);
    },
  );
});
