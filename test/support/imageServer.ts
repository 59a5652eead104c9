import { createHash, randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** Sends `image` at about `bytesPerSecond`, in 64 KiB pieces, so a test can act while a download is under way. */
async function trickle(res: ServerResponse, image: Buffer, bytesPerSecond: number, sent: (bytes: number) => void): Promise<void> {
  const piece = 64 * 1024;
  for (let offset = 0; offset < image.length && !res.destroyed; offset += piece) {
    const bytes = image.subarray(offset, offset + piece);
    res.write(bytes);
    sent(bytes.length);
    await sleep((piece / bytesPerSecond) * 1000);
  }
  res.end();
}

/** The MBR entries after the first, where a deploy adds its NoCloud `cidata` partition. */
const ADDED_ENTRIES = [462, 510] as const;

/** One Linux partition (type 0x83) from 1 MiB to the image's last whole sector, and the boot signature. */
function writeMbr(image: Buffer): void {
  const entry = image.subarray(446, 462);
  entry[4] = 0x83;
  entry.writeUInt32LE(2048, 8);
  entry.writeUInt32LE(Math.floor(image.length / 512) - 2048, 12);
  image[510] = 0x55;
  image[511] = 0xaa;
}

/**
 * An OS image of random bytes served over HTTP on loopback, with its sha256, for deploy tests. `bytesPerSecond`
 * slows every download down to that rate; `partitioned` gives it a partition table, where a deploy's NoCloud seed can
 * land.
 */
export async function startImageServer(sizeBytes = 3 * 1024 * 1024 + 123, options: { bytesPerSecond?: number; partitioned?: boolean } = {}) {
  const image = randomBytes(sizeBytes);
  // Random bytes are never mistaken for an MBR; `partitioned` makes one, as every cloud image has.
  image.fill(0, 446, 512);
  if (options.partitioned) writeMbr(image);
  const sha256 = createHash('sha256').update(image).digest('hex');
  let downloads = 0;
  let bytesServed = 0;
  const sent = (bytes: number) => void (bytesServed += bytes);
  const server = createServer((req, res) => {
    if (req.url !== '/images/demo.img') return void res.writeHead(404).end();
    downloads++;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': image.length });
    if (options.bytesPerSecond) return void trickle(res, image, options.bytesPerSecond, sent);
    res.end(image);
    sent(image.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    image,
    sha256,
    url: `http://127.0.0.1:${port}/images/demo.img`,
    /**
     * Whether `disk` (at least the image's length of it) holds the image as a deploy leaves it: every byte the same,
     * except the free MBR entries, where the deploy may have added its `cidata` partition.
     */
    isOn(disk: Buffer): boolean {
      const [from, to] = ADDED_ENTRIES;
      const prefix = disk.subarray(0, image.length);
      return prefix.length === image.length && prefix.subarray(0, from).equals(image.subarray(0, from)) && prefix.subarray(to).equals(image.subarray(to));
    },
    downloads: () => downloads,
    /** Bytes written to every download so far: a trickled download is under way while this is short of the image. */
    bytesServed: () => bytesServed,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
