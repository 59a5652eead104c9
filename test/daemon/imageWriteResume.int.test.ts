import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExecutionContext } from '../../daemon/agent/commandRunner.ts';
import { writeImage } from '../../daemon/ramdisk/imageWrite.ts';
import { tempDir } from '../support/natsServer.ts';

const ctx: ExecutionContext = { heartbeat: () => undefined, signal: new AbortController().signal };

describe('image write over a connection that is cut mid-body', () => {
  it('resumes with a Range request where the disk stops, and verifies the whole image', { timeout: 30_000 }, async () => {
    using dir = tempDir();
    const image = randomBytes((2 << 20) + 777);
    const sha256 = createHash('sha256').update(image).digest('hex');
    const ranges: (string | undefined)[] = [];
    // The first answer stops after 1 MiB and drops the connection, as a site agent killed mid-transfer does.
    const server = createServer((req, res) => {
      ranges.push(req.headers.range);
      const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
      if (!range) {
        res.writeHead(200, { 'content-length': image.length });
        res.write(image.subarray(0, 1 << 20), () => setTimeout(() => res.socket?.destroy(), 50));
        return;
      }
      const from = Number(range[1]);
      res.writeHead(206, { 'content-length': image.length - from, 'content-range': `bytes ${from}-${image.length - 1}/${image.length}` });
      res.end(image.subarray(from));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    try {
      const disk = join(dir.path, 'disk.raw');
      writeFileSync(disk, Buffer.alloc(4 << 20, 0xee));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/image.raw`;
      const written = await writeImage(disk, url, sha256, ctx);
      expect(written).toMatchObject({ bytesWritten: image.length, sha256, verified: true });
      expect(readFileSync(disk).subarray(0, image.length).equals(image)).toBe(true);
      expect(ranges[0]).toBeUndefined();
      // Resumed exactly where the cut left the disk (a multiple of what arrived before it), never from 0.
      expect(ranges.slice(1)).toEqual([expect.stringMatching(/^bytes=[1-9]\d*-$/)]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
