/**
 * Benchmarks only, inside the ramdisk (`/opt/bcd/ramdisk-bench.js`, run by its /init when `bcd site --ramdisk-args`
 * has `bc.benchimage=<url>`): the project's disk code beside plain `dd`, on the same device, with the same bytes, in
 * the same boot, each sample after dropping the guest's page cache (the VM's disk is `cache=none`, so the host's
 * cache is out of the way too). Per sample it prints one line `bc-bench: {json}` with seconds for:
 *   ddWrite        dd of the image (from tmpfs) to the disk, 1 MiB blocks, fsync
 *   bcdWrite       the project's batched writer of the same bytes (read from tmpfs into reused buffers) + fsync: no fetch, no hash
 *   bcdImageLocal  `writeImage` from a loopback HTTP server (no network): stream hash + write + fsync + read-back hash
 *   ddWipe         dd of zeros over the whole disk + fsync, then dd reading it all back (what a zero wipe moves)
 *   fetchSeconds   the image over the site network into tmpfs, once per boot
 *   bcdWipe        `wipeDisk(zero)`: zeros + fsync + a verifying read of every byte
 *   sha256         hashing the image in memory once (what TCG's emulated CPU costs per hashing pass)
 * argv: <disk> <image url> <samples>.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diskSizeBytes } from '../../daemon/ramdisk/blockDevices.ts';
import { BatchedWriter } from '../../daemon/ramdisk/batchedWriter.ts';
import { wipeDisk } from '../../daemon/ramdisk/diskWipe.ts';
import { writeImage } from '../../daemon/ramdisk/imageWrite.ts';

const [disk = '/dev/vda', imageUrl = '', samplesArg = '3'] = process.argv.slice(2);
const samples = Number(samplesArg);
const image = join(tmpdir(), 'bench-image.raw');
const ctx = { heartbeat: () => undefined, signal: new AbortController().signal };
const say = (what: object) => process.stdout.write(`bc-bench: ${JSON.stringify(what)}\n`);

const dropCaches = () => {
  execFileSync('sync');
  writeFileSync('/proc/sys/vm/drop_caches', '3');
};
const timed = async (run: () => unknown): Promise<number> => {
  dropCaches();
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e9;
};
/** One sha256 pass over a tmpfs file, 1 MiB at a time into one buffer: what hashing costs in the guest's CPU. */
async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  const source = await open(path, 'r');
  const chunk = Buffer.allocUnsafe(1 << 20);
  for (let read = 1; read > 0;) {
    ({ bytesRead: read } = await source.read(chunk, 0, chunk.length, null));
    hash.update(chunk.subarray(0, read));
  }
  await source.close();
  return hash.digest('hex');
}
const dd = (...args: string[]) => execFileSync('dd', ['bs=1M', ...args], { stdio: 'ignore' });

const fetchStarted = process.hrtime.bigint();
const fetched = await fetch(imageUrl);
if (!fetched.ok || !fetched.body) throw new Error(`bench image ${imageUrl} answered ${fetched.status}`);
// Streamed to tmpfs and never held whole in the heap: the host image (341 MiB) in tmpfs plus a copy or two of it in
// Node's heap is more than the ramdisk's machine has (the kernel killed the bench at 1.5 GiB).
await pipeline(Readable.fromWeb(fetched.body), createWriteStream(image));
const fetchSeconds = Number(process.hrtime.bigint() - fetchStarted) / 1e9;
const imageBytes = statSync(image).size;
const hashStarted = process.hrtime.bigint();
const sha256 = await sha256Of(image);
const hashSeconds = Number(process.hrtime.bigint() - hashStarted) / 1e9;
const handle = await open(disk, 'r+');
const diskBytes = await diskSizeBytes(handle, disk);
await handle.close();
const server = createServer((_, res) => {
  res.writeHead(200, { 'content-length': imageBytes });
  createReadStream(image).pipe(res);
});
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
const localUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/image`;

for (let sample = 1; sample <= samples; sample++) {
  const ddWrite = await timed(() => dd(`if=${image}`, `of=${disk}`, 'conv=fsync'));
  const bcdWrite = await timed(async () => {
    // The source is read as dd reads it, 1 MiB at a time into memory it reuses: a ring of buffers, because the writer
    // keeps the chunks of its batch and of the batch in flight (8 MiB) instead of copying them. What is measured is
    // the writer.
    const source = await open(image, 'r');
    const out = await open(disk, 'r+');
    const writer = new BatchedWriter(out, 0);
    const ring = Array.from({ length: 16 }, () => Buffer.allocUnsafe(1 << 20));
    for (let offset = 0, slot = 0; offset < imageBytes; offset += 1 << 20, slot = (slot + 1) % ring.length) {
      const { bytesRead } = await source.read(ring[slot]!, 0, Math.min(1 << 20, imageBytes - offset), offset);
      await writer.add(ring[slot]!.subarray(0, bytesRead));
    }
    await writer.drain();
    await out.sync();
    await out.close();
    await source.close();
  });
  const bcdImageLocal = await timed(() => writeImage(disk, localUrl, sha256, ctx));
  const ddWipe = await timed(() => {
    dd('if=/dev/zero', `of=${disk}`, `count=${Math.floor(diskBytes / 1048576)}`, 'conv=fsync');
    execFileSync('blockdev', ['--flushbufs', disk]);
    dd(`if=${disk}`, 'of=/dev/null');
  });
  const bcdWipe = await timed(() => wipeDisk({ path: disk, serial: null, model: null }, 'zero', ctx));
  say({ sample, disk, imageBytes, diskBytes, fetchSeconds, sha256Seconds: hashSeconds, ddWrite, bcdWrite, bcdImageLocal, ddWipe, bcdWipe });
}
server.close();
rmSync(image, { force: true });
