import { jetstream } from '@nats-io/jetstream';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { NodeLogEntry, NodeLogLine, NodeLogSource } from '../../schemas/agent/nodeLog.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { startApi } from '../support/apiFixture.ts';
import { runCli } from '../support/cliRunner.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

type Env = Awaited<ReturnType<typeof startApi>>;

/** Stores a line as an agent would (the API's backbone runs without broker auth: any subject is publishable here). */
async function print(env: Env, nodeId: string, source: NodeLogSource, text: string, options: { siteId?: string; bodyNodeId?: string } = {}) {
  const line: NodeLogLine = { nodeId: options.bodyNodeId ?? nodeId, source, stream: 'stdout', at: new Date().toISOString(), text };
  return (await jetstream(env.nc).publish(Subjects.nodeLog(options.siteId ?? 'dc1', nodeId, source), JSON.stringify(line))).seq;
}

async function enrolledSite(env: Env, nodeIds: string[]) {
  await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
  for (const nodeId of nodeIds) {
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
    const inspection = await env.bus.execute({ name: 'metal.startInspection', payload: { nodeId }, actor: 'test' });
    const workflowId = (inspection.events[0]!.data as { workflowId: string }).workflowId;
    await env.bus.execute({ name: 'metal.completeOperation', payload: { nodeId, workflowId }, actor: 'test' });
  }
}

const token = async (env: Env, tokenId: string, body: Record<string, string>) =>
  (await env.app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, ...body } })).json().token as string;

const texts = (items: NodeLogEntry[]) => items.map((i) => i.text);

describe('GET /v1/nodes/:nodeId/logs', () => {
  it("pages a node's lines from every source, leaving out what is not the node's, for viewers; a tenant only its own node's since it took it", async () => {
    await using env = await startApi();
    await enrolledSite(env, ['n-a', 'n-b']);
    await print(env, 'n-a', 'site-agent', 'power.set started');
    await print(env, 'n-a', 'ramdisk', 'zero vda: 50%');
    // Not n-a's: a line claiming another node than its subject, and another site's agent printing about n-a.
    await print(env, 'n-a', 'ramdisk', 'forged', { bodyNodeId: 'n-b' });
    await print(env, 'n-a', 'site-agent', 'from dc2', { siteId: 'dc2' });
    await print(env, 'n-b', 'ramdisk', 'n-b line');
    const last = await print(env, 'n-a', 'serial', 'login:');

    const viewer = await token(env, 'viewer-1', { role: 'viewer' });
    const asViewer = { authorization: `Bearer ${viewer}` };
    const get = (url: string, headers: Record<string, string> = asViewer) => env.app.inject({ method: 'GET', url, headers });
    await expect.poll(async () => (await get('/v1/nodes/n-a/logs')).statusCode).toBe(200);
    const page = (await get('/v1/nodes/n-a/logs')).json();
    expect(texts(page.items)).toEqual(['power.set started', 'zero vda: 50%', 'login:']);
    expect(page.items.map((i: NodeLogEntry) => i.source)).toEqual(['site-agent', 'ramdisk', 'serial']);
    expect(page.lastSeq).toBe(last);
    // Newest `limit` lines without `since`; forward pages after `since`.
    expect(texts((await get('/v1/nodes/n-a/logs?limit=1')).json().items)).toEqual(['login:']);
    const first = (await get('/v1/nodes/n-a/logs?since=0&limit=2')).json();
    expect(texts(first.items)).toEqual(['power.set started', 'zero vda: 50%']);
    const rest = (await get(`/v1/nodes/n-a/logs?since=${first.lastSeq}`)).json();
    expect(texts(rest.items)).toEqual(['login:']);
    expect((await get(`/v1/nodes/n-a/logs?since=${last}`)).json()).toEqual({ items: [], lastSeq: last });
    expect((await get('/v1/nodes/nobody/logs')).statusCode).toBe(404);

    // A tenant: another's node is NOT_FOUND; its own shows only what was stored after it took the node on.
    const mine = await token(env, 'tenant-a', { role: 'tenant', tenantId: 'tenant-a' });
    const asTenant = { authorization: `Bearer ${mine}` };
    expect((await get('/v1/nodes/n-a/logs', asTenant)).statusCode).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const deploy = await env.app.inject({ method: 'POST', url: '/v1/commands/metal.deploy', payload: deployBody('n-a'), headers: asTenant });
    expect(deploy.statusCode).toBe(201);
    await print(env, 'n-a', 'ramdisk', 'image.write started');
    await expect.poll(async () => (await get('/v1/nodes/n-a/logs', asTenant)).statusCode).toBe(200);
    expect(texts((await get('/v1/nodes/n-a/logs', asTenant)).json().items)).toEqual(['image.write started']);
    expect((await get('/v1/nodes/n-b/logs', asTenant)).statusCode).toBe(404);
  });

  it('follows as server-sent events: the newest lines, then each new line as it is stored; resumes after Last-Event-ID', async () => {
    await using env = await startApi();
    await enrolledSite(env, ['n-a']);
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = env.app.server.address() as { port: number };
    const before = await print(env, 'n-a', 'site-agent', 'before');
    const url = `http://127.0.0.1:${port}/v1/nodes/n-a/logs?follow=1`;
    const auth = { authorization: `Bearer ${env.adminToken}` };
    await expect.poll(async () => (await env.app.inject({ method: 'GET', url: '/v1/nodes/n-a/logs' })).statusCode).toBe(200);

    const res = await fetch(url, { headers: auth });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const lines = async (count: number) => {
      const pattern = /^id: (\d+)\nevent: line\ndata: (.*)$/gm;
      while ([...text.matchAll(pattern)].length < count) text += (await reader.read()).value ?? '';
      return [...text.matchAll(pattern)].map((m) => ({ id: Number(m[1]), entry: JSON.parse(m[2]!) as NodeLogEntry }));
    };
    expect((await lines(1)).map((l) => [l.id, l.entry.text])).toEqual([[before, 'before']]);
    const live = await print(env, 'n-a', 'ramdisk', 'zero vda: 10%');
    await print(env, 'n-a', 'ramdisk', 'forged', { bodyNodeId: 'n-b' });
    const after = await print(env, 'n-a', 'ramdisk', 'zero vda: 20%');
    expect((await lines(3)).map((l) => [l.id, l.entry.text])).toEqual([
      [before, 'before'],
      [live, 'zero vda: 10%'],
      [after, 'zero vda: 20%'],
    ]);
    await reader.cancel();

    const resumed = await fetch(url, { headers: { ...auth, 'last-event-id': String(live) } });
    const again = resumed.body!.pipeThrough(new TextDecoderStream()).getReader();
    let resumedText = '';
    while (!resumedText.includes('event: line')) resumedText += (await again.read()).value ?? '';
    expect(resumedText).toContain(`id: ${after}\nevent: line`);
    expect(resumedText).not.toContain(`id: ${before}\n`);
    await again.cancel();
  });

  it('`nodes logs` prints a page, and with --follow each line as it is stored', async () => {
    await using env = await startApi();
    await enrolledSite(env, ['n-a']);
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    await print(env, 'n-a', 'site-agent', 'power.set started');
    await expect.poll(async () => (await env.app.inject({ method: 'GET', url: '/v1/nodes/n-a/logs' })).statusCode).toBe(200);
    const page = await runCli(api, env.dataDir, ['nodes', 'logs', 'n-a']);
    expect(page.stdout).toMatch(/^\S+Z site-agent: power\.set started$/m);
    expect((await runCli(api, env.dataDir, ['nodes', 'logs', 'nobody'])).code).toBe(1);

    const bin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));
    const child = spawn(process.execPath, [bin, '--api', api, 'nodes', 'logs', 'n-a', '--follow'], {
      env: { ...process.env, BC_DATA_DIR: env.dataDir, BC_API_TOKEN: '' },
    });
    try {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await expect.poll(() => out, { timeout: 20_000 }).toMatch(/power\.set started/);
      await print(env, 'n-a', 'ramdisk', 'zero vda: 30%');
      await expect.poll(() => out, { timeout: 10_000 }).toMatch(/^\S+Z ramdisk: zero vda: 30%$/m);
    } finally {
      child.kill();
    }
  });
});
