import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionContext } from '../../daemon/agent/commandRunner.ts';
import { describeDisk, diskSizeBytes } from '../../daemon/ramdisk/blockDevices.ts';
import { wipeDisk } from '../../daemon/ramdisk/diskWipe.ts';
import { writeImage } from '../../daemon/ramdisk/imageWrite.ts';
import { sampleOffsets } from '../../daemon/ramdisk/wipeSample.ts';
import { WipedDisk } from '../../schemas/agent/diskWipe.ts';
import { tempDir } from '../support/natsServer.ts';
import { attachLoopDevice, readAll, type LoopDevice } from '../support/loopDevice.ts';
import { serveBytes } from './harness.ts';

const SIZE = 24 << 20;
const ctx: ExecutionContext = { heartbeat: () => undefined, signal: new AbortController().signal };
const thrownCode = async (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (err: { code?: string }) => err.code,
  );

describe('disk wipes and image writes on real block devices (loop devices)', () => {
  const dir = tempDir('bc-loop-');
  const loops: LoopDevice[] = [];
  const loop = (name: string, sizeBytes = SIZE, fill = 0xff) => {
    const device = attachLoopDevice(dir.path, name, sizeBytes, fill);
    loops.push(device);
    return device;
  };

  beforeAll(() => {
    // Two cores, many engineers: every test below attaches its own small devices and detaches them at the end.
    expect(process.getuid?.()).toBe(0);
  });
  afterAll(() => {
    for (const device of loops) device.detach();
    dir[Symbol.dispose]();
  });

  it('sizes a block device from sysfs, where fstat says 0', async () => {
    const device = loop('sized', SIZE);
    const handle = await open(device.path, 'r');
    try {
      expect((await handle.stat()).size).toBe(0);
      expect(await diskSizeBytes(handle, device.path)).toBe(SIZE);
    } finally {
      await handle.close();
    }
    expect(await describeDisk(device.path)).toEqual({ path: device.path, serial: null, model: null });
  });

  it('wipe of a 0xFF-filled loop device reads back zeros (regression: fstat sized it 0 and attested a wipe of nothing)', async () => {
    const device = loop('zero');
    const wiped = await wipeDisk({ path: device.path, serial: 'LOOP-Z', model: 'loop' }, 'zero', ctx);
    expect(WipedDisk.parse(wiped)).toEqual({ path: device.path, serial: 'LOOP-Z', model: 'loop', sizeBytes: SIZE, method: 'zero', verifiedBytes: SIZE });
    expect(readAll(device.path, SIZE + 1).equals(Buffer.alloc(SIZE))).toBe(true);
    expect(readAll(device.file, SIZE + 1).equals(Buffer.alloc(SIZE))).toBe(true);
  });

  it('zeroes a block device in the kernel (BLKZEROOUT through blkdiscard --zeroout), not by writes from user space', async () => {
    const device = loop('zeroout');
    const path = process.env.PATH;
    process.env.PATH = dir.path;
    try {
      const failed = await wipeDisk({ path: device.path, serial: null, model: null }, 'zero', ctx).catch((err: Error & { code?: string }) => err);
      expect(failed).toMatchObject({ code: 'DRIVER_ERROR', message: 'blkdiscard is not installed in this ramdisk (util-linux)' });
    } finally {
      process.env.PATH = path;
    }
    expect(readAll(device.path, 4096).equals(Buffer.alloc(4096, 0xff))).toBe(true);
  });

  it('discard wipe discards the whole loop device and reads a seeded sample back as zeros', async () => {
    const device = loop('discard');
    const wiped = await wipeDisk({ path: device.path, serial: null, model: null }, 'discard', ctx, { sampleBlocks: 64 });
    expect(wiped).toMatchObject({
      method: 'discard',
      sizeBytes: SIZE,
      discardedBytes: SIZE,
      secure: false,
      sample: { count: 64, blockBytes: 4096, seed: expect.stringMatching(/^[0-9a-f]{32}$/) },
    });
    expect(readAll(device.path, SIZE).equals(Buffer.alloc(SIZE))).toBe(true);
    expect(readAll(device.file, SIZE).equals(Buffer.alloc(SIZE))).toBe(true);
    // The sample spans the device: its first and last blocks, and blocks from the seed anywhere between.
    const offsets = sampleOffsets((wiped as Extract<WipedDisk, { method: 'discard' }>).sample, SIZE);
    expect(offsets.slice(0, 2)).toEqual([0, SIZE - 4096]);
    expect(offsets.every((o) => o % 4096 === 0 && o >= 0 && o <= SIZE - 4096)).toBe(true);
  });

  it('a discard wipe of a device that cannot discard zeroes it instead, and says so', async () => {
    const device = loop('nodiscard');
    writeFileSync(`/sys/block/${device.path.split('/').pop()}/queue/discard_max_bytes`, '0');
    const wiped = await wipeDisk({ path: device.path, serial: null, model: null }, 'discard', ctx);
    expect(wiped).toEqual({ path: device.path, serial: null, model: null, sizeBytes: SIZE, method: 'zero', verifiedBytes: SIZE });
    expect(readAll(device.path, SIZE).equals(Buffer.alloc(SIZE))).toBe(true);
  });

  it('refuses a disk of zero size with DISK_SIZE_UNKNOWN instead of calling it wiped', async () => {
    const device = loop('empty', 0);
    expect(await thrownCode(wipeDisk({ path: device.path, serial: null, model: null }, 'zero', ctx))).toBe('DISK_SIZE_UNKNOWN');
    expect(await thrownCode(wipeDisk({ path: device.path, serial: null, model: null }, 'discard', ctx))).toBe('DISK_SIZE_UNKNOWN');
  });

  it('writes an image onto a loop device and verifies it by reading the device back (regression: sized by fstat, every block device was IMAGE_TOO_LARGE)', async () => {
    const device = loop('image');
    const image = randomBytes((3 << 20) + 4_321);
    await using upstream = await serveBytes(image);
    const written = await writeImage(device.path, upstream.url, upstream.sha256, ctx);
    expect(written).toEqual({ disk: device.path, source: upstream.url, bytesWritten: image.length, sha256: upstream.sha256, verified: true });
    expect(readAll(device.path, image.length).equals(image)).toBe(true);
    expect(readAll(device.file, image.length).equals(image)).toBe(true);
    // The rest of the device is untouched.
    expect(
      readAll(device.file, SIZE)
        .subarray(image.length)
        .every((b) => b === 0xff),
    ).toBe(true);
  });

  it('refuses an image larger than the loop device with IMAGE_TOO_LARGE, leaving no partial image', async () => {
    const device = loop('small', 1 << 20, 0);
    const image = randomBytes((1 << 20) + 1);
    await using upstream = await serveBytes(image);
    expect(await thrownCode(writeImage(device.path, upstream.url, upstream.sha256, ctx))).toBe('IMAGE_TOO_LARGE');
    expect(readAll(device.path, 1 << 20).equals(Buffer.alloc(1 << 20))).toBe(true);
  });

  it('lists the machine disks a file-backed simulation gives it without a serial of its own', async () => {
    const file = join(dir.path, 'plain.img');
    writeFileSync(file, Buffer.alloc(4096, 1));
    expect(await describeDisk(file)).toEqual({ path: file, serial: null, model: null });
  });
});
