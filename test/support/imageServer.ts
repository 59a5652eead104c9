import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

/** An OS image of random bytes served over HTTP on loopback, with its sha256, for deploy tests. */
export async function startImageServer(sizeBytes = 3 * 1024 * 1024 + 123) {
  const image = randomBytes(sizeBytes);
  const sha256 = createHash('sha256').update(image).digest('hex');
  let downloads = 0;
  const server = createServer((req, res) => {
    if (req.url !== '/images/demo.img') return void res.writeHead(404).end();
    downloads++;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': image.length }).end(image);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    image,
    sha256,
    url: `http://127.0.0.1:${port}/images/demo.img`,
    downloads: () => downloads,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
