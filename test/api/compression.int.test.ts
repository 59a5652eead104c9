import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';

/** The status line and headers of a GET, then the connection dropped: a live stream never ends on its own. */
const headersOf = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      req.destroy();
    });
    req.on('error', reject);
    req.end();
  });

describe('API answers compressed for clients that accept it', () => {
  it('sends a large read brotli-compressed, the same JSON once decoded, and never compresses the live stream', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    let seq = 0;
    for (let i = 0; i < 20; i++) seq = (await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(`n${i}`), actor: 'test' })).seq;

    const plain = await env.app.inject({ url: `/v1/nodes?minSeq=${seq}&limit=50` });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(4_096);
    const compressed = await env.app.inject({ url: `/v1/nodes?minSeq=${seq}&limit=50`, headers: { 'accept-encoding': 'br, gzip' } });
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(compressed.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(JSON.parse(brotliDecompressSync(compressed.rawPayload).toString())).toEqual(plain.json());

    // Small answers go as they are.
    const session = await env.app.inject({ url: '/v1/session', headers: { 'accept-encoding': 'br, gzip' } });
    expect(session.headers['content-encoding']).toBeUndefined();

    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = env.app.server.address() as AddressInfo;
    const live = await headersOf(`http://127.0.0.1:${port}/v1/events/stream`, { authorization: `Bearer ${env.adminToken}`, 'accept-encoding': 'br, gzip' });
    expect(live.status).toBe(200);
    expect(live.headers['content-type']).toBe('text/event-stream');
    expect(live.headers['content-encoding']).toBeUndefined();
  });
});
