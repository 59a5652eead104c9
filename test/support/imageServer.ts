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

/**
 * An OS image of random bytes served over HTTP on loopback, with its sha256, for deploy tests. `bytesPerSecond`
 * slows every download down to that rate.
 */
export async function startImageServer(sizeBytes = 3 * 1024 * 1024 + 123, options: { bytesPerSecond?: number } = {}) {
  const image = randomBytes(sizeBytes);
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
    downloads: () => downloads,
    /** Bytes written to every download so far: a trickled download is under way while this is short of the image. */
    bytesServed: () => bytesServed,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
