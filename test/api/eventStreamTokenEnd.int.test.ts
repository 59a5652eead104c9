import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';

type Frame = { event: string; data: Record<string, unknown> };

/** Opens the stream on a real socket; `frames` settles once the server ends the response (or `give up` ms pass). */
function openStream(url: string, token: string, giveUpMs: number): { connected: Promise<void>; frames: Promise<{ ended: boolean; frames: Frame[] }> } {
  let onConnected!: () => void;
  const connected = new Promise<void>((r) => (onConnected = r));
  const frames = new Promise<{ ended: boolean; frames: Frame[] }>((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      let buffer = '';
      const frames: Frame[] = [];
      const timer = setTimeout(() => {
        req.destroy();
        resolve({ ended: false, frames });
      }, giveUpMs);
      res.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (frame.startsWith(': connected')) onConnected();
          const event = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (event && data) frames.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        }
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ ended: true, frames });
      });
    });
    req.on('error', reject);
    req.end();
  });
  return { connected, frames };
}

describe('SSE event stream and its token', () => {
  it('ends with an end event saying revoked once its token is revoked, and delivers nothing after', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = env.app.server.address() as { port: number };
    const token = (await env.app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 'viewer-1', role: 'viewer' } })).json().token as string;
    const stream = openStream(`http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.site.>`, token, 20_000);
    await stream.connected;
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'before', name: 'Before' }, actor: 't' });
    expect((await env.app.inject({ method: 'DELETE', url: '/v1/tokens/viewer-1' })).statusCode).toBe(200);
    const revokedAt = Date.now();
    const after = setTimeout(() => void env.bus.execute({ name: 'site.create', payload: { siteId: 'after', name: 'After' }, actor: 't' }), 3_000);
    const { ended, frames } = await stream.frames;
    clearTimeout(after);
    expect(ended).toBe(true);
    expect(Date.now() - revokedAt).toBeLessThan(10_000);
    expect(frames.at(-1)).toEqual({ event: 'end', data: { code: 'UNAUTHENTICATED', reason: 'revoked' } });
    const subjects = frames.filter((f) => f.event === 'events').map((f) => f.data.subject);
    expect(subjects).not.toContain('bc.evt.site.site.after');
  });

  it('ends with an end event saying expired once its token expires', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = env.app.server.address() as { port: number };
    const expiresAt = new Date(Date.now() + 4_000).toISOString();
    const created = await env.app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 'brief', role: 'viewer', expiresAt } });
    expect(created.statusCode).toBe(201);
    const stream = openStream(`http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.site.>`, created.json().token as string, 25_000);
    await stream.connected;
    const { ended, frames } = await stream.frames;
    expect(ended).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    expect(Date.now() - Date.parse(expiresAt)).toBeLessThan(10_000);
    // The stream says where it starts, then ends.
    expect(frames).toEqual([
      { event: 'connected', data: { seq: expect.any(Number) } },
      { event: 'end', data: { code: 'UNAUTHENTICATED', reason: 'expired' } },
    ]);
  });

  it('stays open while its token holds', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = env.app.server.address() as { port: number };
    const stream = openStream(`http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.site.>`, env.adminToken, 4_000);
    await stream.connected;
    expect((await stream.frames).ended).toBe(false);
  });
});
