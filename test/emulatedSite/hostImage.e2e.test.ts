import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { closeSync, copyFileSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeNodeSeed, seedPartitionOffset } from '../../schemas/agent/nodeSeed.ts';
import { QemuVm } from '../../daemon/simulator/vm/qemuVm.ts';
import { buildDirs } from '../../scripts/emulatedSite/buildOutput.ts';
import { buildImage } from '../../scripts/emulatedSite/buildImage.ts';
import { requireTools } from '../../scripts/emulatedSite/hostTools.ts';
import { addTap, createSiteNetwork, destroySiteNetwork, startLanDhcp, type SiteNetwork } from '../../scripts/emulatedSite/siteNetwork.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { TestProcesses, waitForLog } from './harness.ts';
import { sharedHostImage } from './sharedHostImage.ts';

/**
 * The deployable image end to end: built twice to the same bytes, written to a VM's disk with a node seed in its
 * bc-seed partition, booted by the VM's BIOS from that disk (syslinux → kernel → early initramfs → ext4 root), its
 * init takes an address from the LAN's DHCP and starts `bcd node` from the seed against NATS on the site network.
 */
const scratch = mkdtempSync(join(tmpdir(), 'emusite-image-'));
const name = `emu${randomBytes(3).toString('hex')}`;
const processes = new TestProcesses();
let net: SiteNetwork | undefined;
let vm: QemuVm | undefined;

function writeSeed(disk: string, seed: Buffer): void {
  const fd = openSync(disk, 'r+');
  try {
    const mbr = Buffer.alloc(512);
    readSync(fd, mbr, 0, 512, 0);
    const offset = seedPartitionOffset(mbr);
    if (offset === undefined) throw new Error('the built image has no bc-seed partition');
    writeSync(fd, seed, 0, seed.length, offset);
  } finally {
    closeSync(fd);
  }
}

describe('deployable host image', () => {
  beforeAll(() => requireTools(['qemu-system-x86_64', 'dnsmasq', 'ip', 'nats-server', 'mke2fs', 'mkfs.vfat', 'syslinux', 'mcopy', 'sfdisk', 'debugfs']));

  afterAll(async () => {
    await vm?.stop();
    await processes.stopAll();
    if (net) destroySiteNetwork(net);
    rmSync(scratch, { recursive: true, force: true });
  });

  it('builds reproducibly, boots from its own disk and starts bcd node from the seed', async () => {
    const { cacheDir } = buildDirs('image');
    // The run's shared build, and one more from the same inputs: the same bytes.
    const image = await sharedHostImage();
    expect((await buildImage(join(scratch, 'image-again'), cacheDir)).sha256).toBe(image.sha256);

    net = createSiteNetwork(name, randomInt(16, 250));
    const tap = `${name}t0`;
    addTap(net, tap);
    processes.logged(startLanDhcp(net, scratch), join(scratch, 'dnsmasq.log'));
    const natsLog = join(scratch, 'nats.log');
    processes.start('ip', ['netns', 'exec', net.netns, 'nats-server', '-a', net.siteIp, '-p', '4222', '-DV'], natsLog);

    const disk = join(scratch, 'n1-disk0.raw');
    copyFileSync(image.image, disk);
    writeSeed(disk, encodeNodeSeed({ siteId: 'emu', nodeId: 'n1', natsUrl: `nats://${net.siteIp}:4222`, joinToken: 'bcj_jt-imagetest_not-a-real-secret' }));
    const mac = `52:54:00:${randomBytes(3).toString('hex').match(/../g)!.join(':')}`;
    vm = new QemuVm({
      config: {
        name: 'n1',
        uuid: randomUUID(),
        cpus: 1,
        memoryMiB: 768,
        firmware: 'bios',
        nics: [{ mac, tap }],
        disks: [{ file: disk, serial: 'EMU-N1-D0' }],
        runDir: join(scratch, 'vm'),
      },
      netns: net.netns,
      log: createLogger('image-e2e', 'warn'),
    });
    await vm.start({ target: 'Hdd' });

    const serial = await waitForLog('host init', vm.paths.serial, /bc-host: starting bcd node for node n1 of site emu/, 300_000);
    expect(serial).toMatch(/SYSLINUX/);
    expect(serial).toMatch(/bc-host: address 10\.\d+\.0\.1\d\d\/24 on eth0/);
    // bcd node itself runs and reaches the site's NATS with the seed's join request (no join service answers here).
    await waitForLog('bcd node on NATS', natsLog, /bc\.join\.node/, 180_000);
  }, 600_000);
});
