import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

type Frame = { id: number; data: { subject: string } };

/** Reads SSE frames from a real socket until `count` `events` frames arrived; `connected` once the stream is open. */
function readEvents(url: string, count: number, headers: Record<string, string> = {}): { connected: Promise<void>; frames: Promise<Frame[]> } {
  let onConnected!: () => void;
  const connected = new Promise<void>((r) => (onConnected = r));
  const frames = new Promise<Frame[]>((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let buffer = '';
      const frames: Frame[] = [];
      res.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          if (frame.startsWith(': connected')) onConnected();
          buffer = buffer.slice(end + 2);
          const id = /^id: (\d+)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (id && data) frames.push({ id: Number(id), data: JSON.parse(data) });
          if (frames.length === count) {
            req.destroy();
            resolve(frames);
          }
        }
      });
    });
    req.on('error', (err) => (err.message.includes('aborted') ? undefined : reject(err)));
    req.end();
  });
  return { connected, frames };
}

describe('SSE event stream', () => {
  it('streams new events with their sequence as id and resumes after Last-Event-ID', async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = env.app.server.address() as { port: number };
    const base = `http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.site.>`;
    const auth = { authorization: `Bearer ${env.adminToken}` };
    const live = readEvents(base, 2, auth);
    await live.connected;
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'a1', name: 'A' }, actor: 't' });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'a2', name: 'B' }, actor: 't' });
    const frames = await live.frames;
    expect(frames.map((f) => f.data.subject)).toEqual(['bc.evt.site.site.a1', 'bc.evt.site.site.a2']);
    const resumed = await readEvents(base, 1, { ...auth, 'last-event-id': String(frames[0]!.id) }).frames;
    expect(resumed[0]).toMatchObject({ id: frames[1]!.id, data: { subject: 'bc.evt.site.site.a2' } });
  });

  it('opens by saying the position it starts after (the end of the log then), and streams every batch after it', async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = env.app.server.address() as { port: number };
    const before = await env.bus.execute({ name: 'site.create', payload: { siteId: 'b1', name: 'B' }, actor: 't' });
    const res = await fetch(`http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.site.>`, { headers: { authorization: `Bearer ${env.adminToken}` } });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += (await reader.read()).value ?? '';
      return pattern.exec(text)!;
    };
    const connected = Number((await until(/^event: connected\ndata: \{"seq":(\d+)\}$/m))[1]);
    expect(connected).toBe(before.seq);
    const after = await env.bus.execute({ name: 'site.create', payload: { siteId: 'b2', name: 'B2' }, actor: 't' });
    expect(Number((await until(/^id: (\d+)$/m))[1])).toBe(after.seq);
    await reader.cancel();
  });

  it('streams a tenant only the events of its own nodes and their workflows', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = env.app.server.address() as { port: number };
    const { app, bus } = env;
    await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    for (const nodeId of ['own-node', 'foreign-node']) {
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
      const inspection = await bus.execute({ name: 'metal.startInspection', payload: { nodeId }, actor: 'test' });
      await bus.execute({
        name: 'metal.completeOperation',
        payload: { nodeId, workflowId: (inspection.events[0]!.data as { workflowId: string }).workflowId },
        actor: 'test',
      });
    }
    const token = async (tokenId: string, tenantId: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role: 'tenant', tenantId } })).json().token as string;
    const [mine, theirs] = [await token('tenant-a', 'tenant-a'), await token('tenant-b', 'tenant-b')];
    const deploy = (nodeId: string, t: string) =>
      app.inject({ method: 'POST', url: '/v1/commands/metal.deploy', payload: deployBody(nodeId), headers: { authorization: `Bearer ${t}` } });
    expect((await deploy('own-node', mine)).statusCode).toBe(201);

    const live = readEvents(`http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.metal.>`, 1, { authorization: `Bearer ${mine}` });
    await live.connected;
    // The other tenant's deploy comes first on the log; tenant A must not see it, only the next event of its own node.
    expect((await deploy('foreign-node', theirs)).statusCode).toBe(201);
    await bus.execute({ name: 'metal.setMaintenance', payload: { nodeId: 'own-node', on: true, reason: 'fan swap' }, actor: 'test' });
    const frames = await live.frames;
    expect(frames.map((f) => f.data.subject)).toEqual(['bc.evt.metal.node.own-node']);
  });
});
