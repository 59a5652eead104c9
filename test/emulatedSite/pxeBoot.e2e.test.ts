import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDirs } from '../../scripts/emulatedSite/buildOutput.ts';
import { buildRamdisk } from '../../scripts/emulatedSite/buildRamdisk.ts';
import { requireTools } from '../../scripts/emulatedSite/hostTools.ts';
import { addTap, createSiteNetwork, destroySiteNetwork, startLanDhcp, type SiteNetwork } from '../../scripts/emulatedSite/siteNetwork.ts';
import { QemuVm } from '../../daemon/simulator/vm/qemuVm.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { TestProcesses, waitForLog } from './harness.ts';

/**
 * The boot path end to end at the protocol level: a UEFI VM (TCG) on a bridge in its own network namespace asks the
 * LAN's dnsmasq for an address, gets iPXE from our ProxyDHCP + TFTP, chains its per-machine HTTP script, boots the
 * built kernel + initramfs and reaches its /init, which starts `bcd ramdisk` against NATS on the site network.
 */
const ipxeFiles = ['/usr/lib/ipxe/ipxe.efi', '/usr/lib/ipxe/undionly.kpxe'];
const scratch = mkdtempSync(join(tmpdir(), 'emusite-pxe-'));
const name = `emu${randomBytes(3).toString('hex')}`;
const log = createLogger('pxe-e2e', 'warn');
const processes = new TestProcesses();
let net: SiteNetwork | undefined;
let vm: QemuVm | undefined;

describe('PXE boot of a TCG VM through ProxyDHCP, TFTP and HTTP', () => {
  beforeAll(() => {
    // Installing is .ci/run's job (scripts/emulatedSite/requiredPackages.txt); here a missing tool is a clear failure.
    requireTools(['qemu-system-x86_64', 'dnsmasq', 'ip', 'nats-server', 'cpio', 'depmod', 'dpkg-deb', 'apt-get']);
    for (const file of [...ipxeFiles, '/usr/share/OVMF/OVMF_CODE_4M.fd']) {
      if (!existsSync(file)) throw new Error(`${file} is missing: install the Debian packages in scripts/emulatedSite/requiredPackages.txt`);
    }
  });

  afterAll(async () => {
    await vm?.stop();
    await processes.stopAll();
    if (net) destroySiteNetwork(net);
    rmSync(scratch, { recursive: true, force: true });
  });

  it('builds the ramdisk reproducibly and boots it to its /init, which starts bcd ramdisk on the site network', async () => {
    const ramdisk = await buildRamdisk(join(scratch, 'ramdisk'), buildDirs('ramdisk').cacheDir);
    // The same inputs give the same bytes.
    expect((await buildRamdisk(join(scratch, 'ramdisk-again'), buildDirs('ramdisk').cacheDir)).sha256).toEqual(ramdisk.sha256);
    const tftpRoot = join(scratch, 'tftp');
    mkdirSync(tftpRoot);
    for (const file of ipxeFiles) copyFileSync(file, join(tftpRoot, file.split('/').pop()!));

    net = createSiteNetwork(name, randomInt(16, 250));
    const mac = `52:54:00:${randomBytes(3).toString('hex').match(/../g)!.join(':')}`;
    const tap = `${name}t0`;
    addTap(net, tap);
    processes.logged(startLanDhcp(net, scratch), join(scratch, 'dnsmasq.log'));
    processes.start('ip', ['netns', 'exec', net.netns, 'nats-server', '-a', net.siteIp, '-p', '4222'], join(scratch, 'nats.log'));
    const siteLog = join(scratch, 'site.log');
    const token = randomBytes(32).toString('base64url');
    const config = {
      siteIp: net.siteIp,
      httpPort: 8080,
      tftpRoot,
      kernel: ramdisk.kernel,
      initrd: ramdisk.initrd,
      natsUrl: `nats://${net.siteIp}:4222`,
      machines: [{ mac, nodeId: 'n1', token }],
    };
    processes.start(
      'ip',
      ['netns', 'exec', net.netns, process.execPath, '--import', 'tsx', 'test/emulatedSite/bootPathSite.ts', JSON.stringify(config)],
      siteLog,
    );
    await waitForLog('boot path server', siteLog, /boot path ready/, 30_000);

    const disk = join(scratch, 'n1-disk0.raw');
    writeFileSync(disk, '');
    truncateSync(disk, 64 << 20);
    vm = new QemuVm({
      config: {
        name: 'n1',
        uuid: randomUUID(),
        cpus: 1,
        memoryMiB: 1024,
        firmware: 'uefi',
        nics: [{ mac, tap }],
        disks: [{ file: disk, serial: 'EMU-N1-D0' }],
        runDir: join(scratch, 'vm'),
      },
      netns: net.netns,
      log,
    });
    await vm.start({ target: 'Pxe' });

    const serial = await waitForLog('VM serial console', vm.paths.serial, /bc-init: starting bcd ramdisk/, 420_000);
    expect(serial).toMatch(/bc-init: address 10\.\d+\.0\.1\d\d\/24 on eth0/);
    const site = readFileSync(siteLog, 'utf8');
    expect(site).toMatch(/"boot":"tftp"/);
    expect(site).toMatch(/TFTP transfer complete.*ipxe\.efi|ipxe\.efi.*TFTP transfer complete/);
    expect(site).toMatch(/"boot":"http"/);
    expect(site).toMatch(/\/boot\/n1\/<token>\.ipxe/);
    expect(site).toMatch(/\/ramdisk\/initrd\.img/);
    // bcd itself runs: node started and reached the site's NATS, which has no join service to answer it.
    await waitForLog('bcd ramdisk', vm.paths.serial, /"name":"bcd-ramdisk"/, 120_000);
  }, 600_000);
});
