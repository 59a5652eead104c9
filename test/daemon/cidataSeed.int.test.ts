import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { ExecutionContext } from '../../daemon/agent/commandRunner.ts';
import { CIDATA_SIZE_BYTES, writeCidata } from '../../daemon/ramdisk/cidataPartition.ts';
import { noCloudSeed } from '../../daemon/ramdisk/noCloudSeed.ts';
import { attachLoopDevice, readAll, type LoopDevice } from '../support/loopDevice.ts';
import { tempDir } from '../support/natsServer.ts';

const MiB = 1 << 20;
const SIZE = 32 * MiB;
const MARKER_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMarkerKeyForTheCidataTest marker@bc';
const ctx: ExecutionContext = { heartbeat: () => undefined, signal: new AbortController().signal };
const sh = (file: string, args: string[], input?: string) => execFileSync(file, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });

interface Table {
  label: string;
  partitions: { start: number; size: number; type: string; name?: string }[];
}
const tableOf = (path: string) => (JSON.parse(sh('sfdisk', ['--json', path])) as { partitiontable: Table }).partitiontable;

/** An image as a cloud image is made: a partition table over less than the disk (the image is smaller than the disk). */
function imageTable(file: string, label: 'gpt' | 'dos') {
  sh('sfdisk', ['--quiet', '--no-reread', '--no-tell-kernel', file], `label: ${label}\nstart=2048, size=8192, type=${label === 'gpt' ? 'L' : '83'}\n`);
}

describe('the NoCloud seed on a real block device (loop device), read back by the tools cloud-init relies on', () => {
  const dir = tempDir('bc-cidata-');
  const loops: LoopDevice[] = [];

  beforeAll(() => expect(process.getuid?.()).toBe(0));
  afterAll(() => {
    for (const device of loops.reverse()) device.detach();
    dir[Symbol.dispose]();
  });

  /** The cidata partition as its own block device, the way the kernel shows `/dev/vda3` at the next boot. */
  function partitionDevice(disk: string, start: number, size: number): string {
    const path = sh('losetup', ['--find', '--show', '--offset', String(start * 512), '--sizelimit', String(size * 512), disk]).trim();
    loops.push({ path, file: disk, detach: () => sh('losetup', ['--detach', path]) });
    return path;
  }

  for (const label of ['gpt', 'dos'] as const) {
    it(`adds a CIDATA vfat partition at the end of a ${label} disk holding the keys and the user's cloud-config`, async () => {
      const device = attachLoopDevice(dir.path, `disk-${label}`, SIZE, 0);
      loops.push(device);
      imageTable(device.path, label);
      const files = noCloudSeed({
        instanceId: 'n1-wf1',
        hostname: 'n1',
        sshKeys: [MARKER_KEY],
        userData: '#cloud-config\n# the user comment stays\npackages: [htop]\n',
        networkConfig: 'version: 2\nethernets:\n  eth0:\n    dhcp4: true\n',
      });
      const written = await writeCidata(device.path, files, ctx, { required: true });
      expect(written).toMatchObject({ written: true, disk: device.path, table: label, verified: true, sizeBytes: CIDATA_SIZE_BYTES });
      if (!written.written) return;

      const table = tableOf(device.path);
      expect(table.partitions).toHaveLength(2);
      const cidata = table.partitions[1]!;
      expect(cidata.start * 512).toBe(written.offset);
      expect((cidata.start + cidata.size) * 512).toBeLessThanOrEqual(SIZE - 33 * 512);
      if (label === 'gpt') expect(sh('sfdisk', ['--verify', device.path])).toContain('No errors detected');
      else expect(cidata.type).toBe('c');

      const partition = partitionDevice(device.file, cidata.start, cidata.size);
      const probe = sh('blkid', ['-p', '-o', 'export', partition]);
      expect(probe).toMatch(/^TYPE=vfat$/m);
      expect(probe).toMatch(/^LABEL=CIDATA$/m);
      const read = (name: string) => sh('mcopy', ['-i', partition, `::${name}`, '-']);
      const userData = read('user-data');
      expect(userData.startsWith('#cloud-config\n')).toBe(true);
      expect(userData).toContain('# the user comment stays');
      expect(parseYaml(userData)).toEqual({ packages: ['htop'], ssh_authorized_keys: [MARKER_KEY] });
      expect(parseYaml(read('meta-data'))).toEqual({ 'instance-id': 'n1-wf1', 'local-hostname': 'n1' });
      expect(parseYaml(read('network-config'))).toMatchObject({ version: 2 });
    });
  }

  it('a retried write reuses its partition instead of adding a second one', async () => {
    const device = attachLoopDevice(dir.path, 'retried', SIZE, 0);
    loops.push(device);
    imageTable(device.path, 'gpt');
    await writeCidata(device.path, noCloudSeed({ instanceId: 'a', hostname: 'n1', sshKeys: [] }), ctx, { required: true });
    await writeCidata(device.path, noCloudSeed({ instanceId: 'b', hostname: 'n1', sshKeys: [MARKER_KEY] }), ctx, { required: true });
    const table = tableOf(device.path);
    expect(table.partitions).toHaveLength(2);
    const cidata = table.partitions[1]!;
    expect(sh('mcopy', ['-i', `${device.path}@@${cidata.start * 512}`, '::user-data', '-'])).toContain(MARKER_KEY);
  });

  it('refuses a disk whose image has no partition table, and one with no room left at its end', async () => {
    const bare = attachLoopDevice(dir.path, 'bare', SIZE, 0);
    loops.push(bare);
    const seed = noCloudSeed({ instanceId: 'a', hostname: 'n1', sshKeys: [MARKER_KEY] });
    await expect(writeCidata(bare.path, seed, ctx, { required: true })).rejects.toMatchObject({ code: 'INVALID_COMMAND' });
    // Nothing the user asked for: the step says so and leaves the disk as the image left it.
    expect(await writeCidata(bare.path, seed, ctx, { required: false })).toMatchObject({
      written: false,
      reason: expect.stringContaining('no partition table'),
    });
    expect(readAll(bare.path, SIZE).equals(Buffer.alloc(SIZE))).toBe(true);
    const full = join(dir.path, 'full.img');
    writeFileSync(full, Buffer.alloc(SIZE));
    sh('sfdisk', ['--quiet', full], 'label: dos\nstart=2048, type=83\n');
    await expect(writeCidata(full, seed, ctx, { required: true })).rejects.toMatchObject({ code: 'IMAGE_TOO_LARGE' });
  });
});
