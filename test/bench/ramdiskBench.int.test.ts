import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootSamples } from '../../scripts/bench/site/figures.ts';
import { attachLoopDevice, readAll, type LoopDevice } from '../support/loopDevice.ts';

/**
 * The in-boot half of `npm run bench:site` (`scripts/emulatedSite/ramdiskBench.ts`, which a ramdisk runs before `bcd
 * ramdisk`), run here on a real block device as the ramdisk runs it: the whole bench takes QEMU VMs and half an hour,
 * so without this a broken in-boot program shows only as "no in-boot sample" at the end of that half hour. It once
 * held the image in its heap twice beside the tmpfs copy and the kernel killed it in a 1.5 GiB machine; the peak
 * resident set is checked against the image's size.
 */
const IMAGE_BYTES = 160 << 20;
const scratch = mkdtempSync(join(tmpdir(), 'bc-ramdisk-bench-'));
const image = randomBytes(IMAGE_BYTES);
let disk: LoopDevice;
let url = '';
const server = createServer((_, res) => res.writeHead(200, { 'content-length': image.length }).end(image));

beforeAll(async () => {
  disk = attachLoopDevice(scratch, 'disk', IMAGE_BYTES + (16 << 20));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/disk.raw`;
});
afterAll(() => {
  server.close();
  disk?.detach();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs the program to its end, sampling its peak resident set (VmHWM only grows, so the last reading is the peak). */
function runBench(args: string[]): Promise<{ code: number | null; output: string; peakBytes: number }> {
  return new Promise((resolve) => {
    const child = spawn('npx', ['tsx', 'scripts/emulatedSite/ramdiskBench.ts', ...args], { env: { ...process.env, TMPDIR: scratch } });
    let output = '';
    let peakBytes = 0;
    const sample = setInterval(() => {
      try {
        for (const pid of descendants(child.pid!)) {
          const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
          peakBytes = Math.max(peakBytes, Number(kib ?? 0) * 1024);
        }
      } catch {
        // The process ended between the listing and the read.
      }
    }, 50);
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => {
      clearInterval(sample);
      resolve({ code, output, peakBytes });
    });
  });
}

function descendants(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  return [pid, ...children.flatMap(descendants)];
}

describe('the in-boot site bench on a loop device', () => {
  it('prints a parseable sample, leaves the disk zeroed, and never holds the image in memory', { timeout: 300_000 }, async () => {
    const { code, output, peakBytes } = await runBench([disk.path, url, '1']);
    expect(code, output).toBe(0);

    const samples = bootSamples(output);
    expect(samples.map((s) => s.sample)).toEqual([1]);
    for (const s of samples) {
      expect(s).toMatchObject({ disk: disk.path, imageBytes: IMAGE_BYTES, diskBytes: IMAGE_BYTES + (16 << 20) });
      for (const seconds of [s.fetchSeconds, s.sha256Seconds, s.ddWrite, s.bcdWrite, s.bcdImageLocal, s.ddWipe, s.bcdWipe]) {
        expect(seconds).toBeGreaterThan(0);
      }
    }
    // The last thing each round does is the project's zero wipe.
    expect(readAll(disk.path, IMAGE_BYTES + (16 << 20)).every((b) => b === 0)).toBe(true);
    // The image lives in tmpfs, outside any process. The program's own peak, about 145 MB whatever the image's size
    // (Node, tsx, the writer's buffers), stays far below the two heap copies (another 335 MB here) it once held.
    expect(peakBytes).toBeGreaterThan(0);
    expect(peakBytes).toBeLessThan(IMAGE_BYTES + (64 << 20));
  });
});
