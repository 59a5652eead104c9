import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BootTickets, type BootTicket } from '../../daemon/site/bootTickets.ts';
import { startBootServer, type BootServer } from '../../daemon/site/bootServer.ts';
import { ImageCache } from '../../daemon/site/imageCache.ts';
import { tempDir } from '../support/natsServer.ts';
import { log, serveBytes } from './harness.ts';

const servers: BootServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function boot(stateDir: string, script: (nodeId: string) => string | Promise<string> = (nodeId) => `#!ipxe\n# ${nodeId}\n`, ramdiskDir?: string) {
  const tickets = new BootTickets(stateDir, { budgetMs: 60_000 });
  const images = new ImageCache(stateDir);
  const refetched: BootTicket[] = [];
  const server = await startBootServer({
    host: '127.0.0.1',
    port: 0,
    tickets,
    images,
    log,
    script: (ticket) => script(ticket.nodeId),
    refetched: async (ticket) => void refetched.push(ticket),
    retryAfterSeconds: 3,
    ...(ramdiskDir ? { ramdiskDir } : {}),
  });
  servers.push(server);
  /** What `boot.setOnce Pxe` then the reset's `power.set` do: the node's boot script URL, good for one fetch. */
  const ticketFor = (nodeId: string, attempt = 1) => {
    tickets.expectRamdiskBoot(nodeId);
    tickets.mintForReset(nodeId, { workflowId: `wf-${nodeId}`, stepIndex: 1, attempt });
    return `${server.baseUrl}${tickets.pathOf(nodeId)!}`;
  };
  return { tickets, images, server, ticketFor, refetched };
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

  it('keeps cached images and boot tickets across a restart', async () => {
    using dir = tempDir();
    const bytes = randomBytes(4_096);
    const upstream = await serveBytes(bytes);
    const first = await boot(dir.path);
    first.images.register(upstream.url, upstream.sha256);
    expect((await fetch(`${first.server.baseUrl}/images/${upstream.sha256}`)).status).toBe(200);
    const url = first.ticketFor('n1');
    await upstream.close();

    const second = await boot(dir.path);
    expect(second.tickets.pathOf('n1')).toBe(new URL(url).pathname);
    const again = await fetch(`${second.server.baseUrl}/images/${upstream.sha256}`);
    expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('serves an iPXE script only at the node path with its own boot ticket, once', async () => {
    using dir = tempDir();
    const { tickets, server, ticketFor, refetched } = await boot(dir.path);
    expect(tickets.pathOf('n1')).toBeUndefined();
    const u1 = ticketFor('n1');
    const u2 = ticketFor('n2');
    const t1 = u1.split('/').at(-1)!.replace('.ipxe', '');
    const t2 = u2.split('/').at(-1)!.replace('.ipxe', '');
    expect(t1).not.toBe(t2);
    expect(t1).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await fetch(`${server.baseUrl}/boot/n1/${t2}.ipxe`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/boot/n3/${t1}.ipxe`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/boot/n1/${'A'.repeat(43)}.ipxe`)).status).toBe(404);
    const ok = await fetch(u1);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('# n1');
    expect(refetched).toEqual([]);
    // The second fetch of the same boot is refused and reported: the boot is contested.
    expect((await fetch(u1)).status).toBe(404);
    expect(refetched.map((t) => t.nodeId)).toEqual(['n1']);
    // The next reset mints a new ticket; the old URL stays dead.
    const next = ticketFor('n1', 2);
    expect(next).not.toBe(u1);
    expect((await fetch(next)).status).toBe(200);
  });

  it('gives no ticket to a boot the reset did not follow, withdraws it on another boot target, and lets it expire', async () => {
    using dir = tempDir();
    let now = 1_000_000;
    const tickets = new BootTickets(dir.path, { budgetMs: 10_000, now: () => now });
    expect(tickets.mintForReset('n1', { workflowId: 'w', stepIndex: 1, attempt: 1 })).toBeUndefined();
    tickets.expectRamdiskBoot('n1');
    const ticket = tickets.mintForReset('n1', { workflowId: 'w', stepIndex: 1, attempt: 1 })!;
    expect(tickets.pathOf('n1')).toBe(`/boot/n1/${ticket.ticketId}.ipxe`);
    now += 10_001;
    expect(tickets.pathOf('n1')).toBeUndefined();
    expect(tickets.take('n1', ticket.ticketId).kind).toBe('unknown');
    tickets.expectRamdiskBoot('n2');
    tickets.withdraw('n2');
    expect(tickets.mintForReset('n2', { workflowId: 'w2', stepIndex: 1, attempt: 1 })).toBeUndefined();
  });

  it('answers 503 with Retry-After while the script cannot be made, and 404 only when the boot is refused', async () => {
    using dir = tempDir();
    const failures: Record<string, Error & { code: string }> = {
      n1: Object.assign(new Error('no answer to the boot token request'), { code: 'UNAVAILABLE' }),
      n2: Object.assign(new Error('no workflow of n2 is waiting for a ramdisk'), { code: 'BOOT_TOKEN_NOT_DUE' }),
    };
    const { ticketFor, refetched, server } = await boot(dir.path, async (nodeId) => {
      throw failures[nodeId]!;
    });
    const url = ticketFor('n1');
    const unavailable = await fetch(url);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toBe('3');
    // A 503 does not spend the ticket: iPXE's retry is the same boot's first fetch.
    expect((await fetch(url)).status).toBe(503);
    expect(refetched).toEqual([]);
    expect(server.baseUrl).toBeTruthy();
    const refused = await fetch(ticketFor('n2'));
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
