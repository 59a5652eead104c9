import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BootTokens } from '../../daemon/site/bootTokens.ts';
import { startBootServer, type BootServer } from '../../daemon/site/bootServer.ts';
import { ImageCache } from '../../daemon/site/imageCache.ts';
import { tempDir } from '../support/natsServer.ts';
import { log, serveBytes } from './harness.ts';

const servers: BootServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function boot(stateDir: string, script: (nodeId: string) => string | Promise<string> = (nodeId) => `#!ipxe\n# ${nodeId}\n`, ramdiskDir?: string) {
  const tokens = new BootTokens(stateDir);
  const images = new ImageCache(stateDir);
  const server = await startBootServer({
    host: '127.0.0.1',
    port: 0,
    tokens,
    images,
    log,
    script,
    retryAfterSeconds: 3,
    ...(ramdiskDir ? { ramdiskDir } : {}),
  });
  servers.push(server);
  return { tokens, images, server };
}

describe('site agent boot server', () => {
  it("serves the ramdisk's kernel and initrd by their fixed names only, and nothing when it has no ramdisk", async () => {
    using dir = tempDir();
    mkdirSync(join(dir.path, 'ramdisk'));
    writeFileSync(join(dir.path, 'ramdisk', 'vmlinuz'), 'kernel-bytes');
    writeFileSync(join(dir.path, 'ramdisk', 'initrd.img'), 'initrd-bytes');
    writeFileSync(join(dir.path, 'ramdisk', 'manifest.json'), '{}');
    const { server } = await boot(dir.path, undefined, join(dir.path, 'ramdisk'));
    expect(await (await fetch(`${server.baseUrl}/ramdisk/vmlinuz`)).text()).toBe('kernel-bytes');
    expect(await (await fetch(`${server.baseUrl}/ramdisk/initrd.img`)).text()).toBe('initrd-bytes');
    expect((await fetch(`${server.baseUrl}/ramdisk/manifest.json`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/ramdisk/..%2Fboot-tokens.json`)).status).toBe(404);
    const bare = await boot(dir.path);
    expect((await fetch(`${bare.server.baseUrl}/ramdisk/vmlinuz`)).status).toBe(404);
  });

  it('serves a cached image fetched once and verified, with Range requests', async () => {
    using dir = tempDir();
    const bytes = randomBytes(100_000);
    await using upstream = await serveBytes(bytes);
    const { images, server } = await boot(dir.path);
    images.register(upstream.url, upstream.sha256);
    const url = `${server.baseUrl}/images/${upstream.sha256}`;

    const [a, b] = await Promise.all([fetch(url), fetch(url)]);
    expect(a.status).toBe(200);
    expect(a.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await a.arrayBuffer()).equals(bytes)).toBe(true);
    expect(Buffer.from(await b.arrayBuffer()).equals(bytes)).toBe(true);

    const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);

    const tail = await fetch(url, { headers: { range: 'bytes=-5' } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(-5))).toBe(true);
    const open = await fetch(url, { headers: { range: 'bytes=99990-' } });
    expect(Buffer.from(await open.arrayBuffer()).equals(bytes.subarray(99_990))).toBe(true);
    const beyond = await fetch(url, { headers: { range: `bytes=${bytes.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    expect(upstream.requests).toBe(1);
  });

  it('answers 404 for an unknown image and 502 for an upstream whose bytes do not match, caching nothing', async () => {
    using dir = tempDir();
    await using upstream = await serveBytes(randomBytes(1_000));
    const { images, server } = await boot(dir.path);
    expect((await fetch(`${server.baseUrl}/images/${'0'.repeat(64)}`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/images/not-a-digest`)).status).toBe(404);
    images.register(upstream.url, 'b'.repeat(64));
    expect((await fetch(`${server.baseUrl}/images/${'b'.repeat(64)}`)).status).toBe(502);
    expect((await fetch(`${server.baseUrl}/images/${'b'.repeat(64)}`)).status).toBe(502);
    expect(upstream.requests).toBe(2);
  });

  it('keeps cached images and boot tokens across a restart', async () => {
    using dir = tempDir();
    const bytes = randomBytes(4_096);
    const upstream = await serveBytes(bytes);
    const first = await boot(dir.path);
    first.images.register(upstream.url, upstream.sha256);
    expect((await fetch(`${first.server.baseUrl}/images/${upstream.sha256}`)).status).toBe(200);
    const token = first.tokens.tokenFor('n1');
    await upstream.close();

    const second = await boot(dir.path);
    expect(second.tokens.tokenFor('n1')).toBe(token);
    const again = await fetch(`${second.server.baseUrl}/images/${upstream.sha256}`);
    expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('serves an iPXE script only at the node path with its own token', async () => {
    using dir = tempDir();
    const { tokens, server } = await boot(dir.path);
    const t1 = tokens.tokenFor('n1');
    const t2 = tokens.tokenFor('n2');
    expect(t1).not.toBe(t2);
    expect(t1).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ok = await fetch(`${server.baseUrl}/boot/n1/${t1}.ipxe`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('# n1');
    expect((await fetch(`${server.baseUrl}/boot/n1/${t2}.ipxe`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/boot/n3/${t1}.ipxe`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/boot/n1/${'A'.repeat(43)}.ipxe`)).status).toBe(404);
  });

  it('answers 503 with Retry-After while the script cannot be made, and 404 only when the boot is refused', async () => {
    using dir = tempDir();
    const failures: Record<string, Error & { code: string }> = {
      n1: Object.assign(new Error('no answer to the boot token request'), { code: 'UNAVAILABLE' }),
      n2: Object.assign(new Error('no workflow of n2 is waiting for a ramdisk'), { code: 'BOOT_TOKEN_NOT_DUE' }),
    };
    const { tokens, server } = await boot(dir.path, async (nodeId) => {
      throw failures[nodeId]!;
    });
    const unavailable = await fetch(`${server.baseUrl}/boot/n1/${tokens.tokenFor('n1')}.ipxe`);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toBe('3');
    const refused = await fetch(`${server.baseUrl}/boot/n2/${tokens.tokenFor('n2')}.ipxe`);
    expect(refused.status).toBe(404);
    expect(refused.headers.get('retry-after')).toBeNull();
  });

  it('serves the first-stage script to embed in iPXE', async () => {
    using dir = tempDir();
    const { server } = await boot(dir.path);
    const firstStage = await fetch(`${server.baseUrl}/first-stage.ipxe`);
    expect(firstStage.status).toBe(200);
    expect(await firstStage.text()).toContain('chain --autofree ${filename} || goto again');
  });
});
