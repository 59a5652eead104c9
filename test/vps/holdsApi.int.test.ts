import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { signAgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { keyIdOf } from '../../schemas/trust/agentIds.ts';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { deployMetalHost } from './metalHost.ts';

const bin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));
const execFileAsync = promisify(execFile);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
type Answer = {
  code?: string;
  detail?: string;
  issues?: Array<{ path: string; message: string }>;
  holdId?: string;
  seq: number;
  events: Array<{ type: string; data: any }>;
};

/** `bcd node` of `nodeId`, registered in the log with a key of its own: `beat()` says it is alive. */
function nodeAgent(nodeId: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicKeyRaw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const key = publicKeyRaw.toString('base64');
  const agentId = `node-${nodeId}`;
  const registered = { type: 'AgentRegistered', data: { agentId, role: 'node', siteId: 'dc1', nodeId, publicKey: key, keyId: keyIdOf(key) } };
  const heartbeat = () =>
    JSON.stringify(signAgentHeartbeat({ agentId, siteId: 'dc1', nodeId, sentAt: new Date().toISOString() }, { privateKey, publicKeyRaw }));
  return { agentId, registered, heartbeat };
}

describe('holds API', () => {
  it('places, lists and releases holds on the nodes read model, scoped to the tenant, and refuses with stable codes', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app } = env;
    const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
    const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, token?: string, payload?: object) => {
      const res = await app.inject({ method, url, ...(payload ? { payload } : {}), ...(token ? { headers: bearer(token) } : {}) });
      return { status: res.statusCode, body: res.json<Answer & { items: any[] }>() };
    };

    // Two deployed hosts with 8 and 16 cores whose bcd node beats, and an agentless node of the Talos pool.
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    const workflowOf = (result: Awaited<ReturnType<typeof run>>) => (result.events[0]!.data as { workflowId: string }).workflowId;
    for (const [nodeId, cores, mac] of [
      ['n1', 8, '52:54:00:00:00:01'],
      ['n2', 16, '52:54:00:00:00:02'],
    ] as const) {
      await deployMetalHost(run, nodeId, cores, mac);
    }
    await run('vps.createPool', { poolId: 'metal-a', class: 'metal', agent: 'bcd', siteId: 'dc1' });
    await run('vps.createPool', { poolId: 'talos', class: 'metal', agent: 'none', siteId: 'dc1' });
    await run('metal.enroll', { ...enrollPayload('tal1'), poolId: 'talos', macs: ['52:54:00:00:00:09'] });
    await run('metal.completeOperation', { nodeId: 'tal1', workflowId: workflowOf(await run('metal.startInspection', { nodeId: 'tal1' })) });
    await run('metal.completeOperation', {
      nodeId: 'tal1',
      workflowId: workflowOf(await run('metal.deploy', { nodeId: 'tal1', profile: 'talos-1.8', role: 'host' })),
    });
    const agents = ['n1', 'n2'].map(nodeAgent);
    for (const a of agents)
      await env.store.append(
        `bc.evt.trust.agent.${a.agentId}`,
        {
          events: [
            {
              ...a.registered,
              version: 1,
              metadata: {
                eventId: `${a.agentId}-e`,
                aggregateType: 'trust.agent',
                aggregateId: a.agentId,
                commandId: `${a.agentId}-c`,
                commandName: 'trust.registerAgent',
                correlationId: 'c',
                causationId: 'c',
                actor: 'test',
                time: new Date().toISOString(),
              },
            },
          ],
        },
        { expectedSeq: 0, msgId: `${a.agentId}-c` },
      );
    const beating = setInterval(() => agents.forEach((a, i) => env.nc.publish(Subjects.agentHeartbeat('dc1', `n${i + 1}`), a.heartbeat())), 100);
    try {
      await expect
        .poll(async () => (await call('GET', '/v1/nodes?siteId=dc1')).body.items.filter((n) => n.connected).map((n) => n.nodeId), { timeout: 10_000 })
        .toEqual(['n1', 'n2']);
      for (const tenantId of ['tenant-a', 'tenant-b']) await run('vps.createTenant', { tenantId, name: tenantId });
      const token = async (tokenId: string, tenantId: string) =>
        (await call('POST', '/v1/tokens', undefined, { tokenId, role: 'tenant', tenantId })).body as unknown as { token: string };
      const a = (await token('ta', 'tenant-a')).token;
      const b = (await token('tb', 'tenant-b')).token;

      // Sent twice under one Idempotency-Key: one hold, the second answer the first's.
      const keyed = async () => {
        const res = await app.inject({
          method: 'POST',
          url: '/v1/holds',
          payload: { siteId: 'dc1', resources: { vcpus: 1, memoryMib: 512, diskGib: 1 }, durationSeconds: 600 },
          headers: { ...bearer(a), 'idempotency-key': 'hold-once' },
        });
        return { status: res.statusCode, body: res.json<Answer & { duplicate?: boolean }>() };
      };
      const once = await keyed();
      const twice = await keyed();
      expect([once.status, twice.status, twice.body.duplicate, twice.body.holdId]).toEqual([201, 200, true, once.body.holdId]);
      expect((await call('DELETE', `/v1/holds/${once.body.holdId}?minSeq=${once.body.seq}`, a)).body.events.map((e) => e.type)).toEqual(['HoldReleased']);

      // Tenant a holds 6 cores on one node: best fit, n1.
      const placed = await call('POST', '/v1/holds', a, { siteId: 'dc1', resources: { vcpus: 6, memoryMib: 4_096, diskGib: 50 }, durationSeconds: 600 });
      expect([placed.status, placed.body.events[0]?.type]).toEqual([201, 'HoldPlaced']);
      expect(placed.body.events[0]!.data).toMatchObject({
        holder: { tenantId: 'tenant-a' },
        nodes: [{ nodeId: 'n1', freeBefore: { vcpus: 8 } }],
        considered: 3,
      });
      const holdId = placed.body.holdId!;

      // Tenant b wants two whole nodes: n1 is held, the Talos node is agentless; every node's reason is listed.
      const refused = await call('POST', '/v1/holds', b, { siteId: 'dc1', nodes: 2, durationSeconds: 600 });
      expect([refused.status, refused.body.code]).toEqual([409, 'NO_CAPACITY']);
      expect(refused.body.issues).toEqual([
        { path: 'n1', message: 'INSUFFICIENT_CAPACITY (short of vcpus, memoryMib, diskGib)' },
        { path: 'tal1', message: 'AGENTLESS' },
      ]);
      const talos = await call('POST', '/v1/holds', undefined, { siteId: 'dc1', holder: { poolId: 'talos' }, durationSeconds: 600 });
      expect([talos.status, talos.body.code]).toEqual([422, 'AGENTLESS_NOT_HOLDABLE']);
      const onlyTalos = await call('POST', '/v1/holds', undefined, {
        siteId: 'dc1',
        holder: { poolId: 'metal-a' },
        selector: { matchExpressions: [{ key: 'bc.dev/cpu.cores', operator: 'DoesNotExist' }] },
        durationSeconds: 600,
      });
      expect([onlyTalos.status, onlyTalos.body.code]).toEqual([422, 'AGENTLESS_NOT_HOLDABLE']);
      expect((await call('POST', '/v1/holds', a, { siteId: 'dc1', holder: { tenantId: 'tenant-b' }, durationSeconds: 600 })).body.code).toBe('FORBIDDEN');
      expect((await call('POST', '/v1/holds', undefined, { siteId: 'dc1', durationSeconds: 600 })).body.code).toBe('VALIDATION_FAILED');
      expect((await call('POST', '/v1/holds', a, { siteId: 'dc1', durationSeconds: 5 })).body.code).toBe('VALIDATION_FAILED');
      // The whole of n2 is still b's to hold.
      const whole = await call('POST', '/v1/holds', b, { siteId: 'dc1', durationSeconds: 600 });
      expect(whole.body.events[0]!.data.nodes.map((n: { nodeId: string }) => n.nodeId)).toEqual(['n2']);

      const seq = whole.body.seq;
      const list = async (token?: string) => (await call('GET', `/v1/holds?status=active&minSeq=${seq}`, token)).body.items.map((h) => [h.holdId, h.status]);
      expect(await list(a)).toEqual([[holdId, 'active']]);
      expect(await list(b)).toEqual([[whole.body.holdId, 'active']]);
      expect((await list()).length).toBe(2);

      // b cannot release a's hold (it does not exist for b); a can, once.
      expect((await call('DELETE', `/v1/holds/${holdId}`, b)).body.code).toBe('HOLD_UNKNOWN');
      const released = await call('DELETE', `/v1/holds/${holdId}`, a);
      expect([released.status, released.body.events.map((e) => e.type)]).toEqual([200, ['HoldReleased']]);
      const again = await call('DELETE', `/v1/holds/${holdId}?minSeq=${released.body.seq}`, a);
      expect([again.status, again.body.events]).toEqual([200, []]);
      expect((await call('GET', `/v1/holds?status=released&minSeq=${released.body.seq}`, a)).body.items.map((h) => h.holdId).sort()).toEqual(
        [holdId, once.body.holdId!].sort(),
      );
      // Released, its capacity is b's to hold now.
      const bAgain = await call('POST', '/v1/holds', b, { siteId: 'dc1', durationSeconds: 600 });
      expect(bAgain.body.events[0]!.data.nodes[0].nodeId).toBe('n1');

      // The CLI over the same API (the admin token from the data dir): refused with the code, released, placed, listed.
      await app.listen({ port: 0, host: '127.0.0.1' });
      const apiUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const cli = async (...args: string[]) => {
        try {
          const { stdout } = await execFileAsync(process.execPath, [bin, '--api', apiUrl, 'holds', ...args], {
            env: { ...process.env, BC_DATA_DIR: env.dataDir, BC_API_TOKEN: '' },
          });
          return { code: 0, out: stdout };
        } catch (err) {
          const e = err as { code: number; stdout: string; stderr: string };
          return { code: e.code, out: e.stdout + e.stderr };
        }
      };
      // The CLI reads without minSeq: let the read model catch up with the log first.
      const caughtUp = async () => env.readers.get('vps')!.waitFor(await env.store.streamLastSequence(), 5_000);
      const small = ['--vcpus', '1', '--memory-mib', '512', '--disk-gib', '1'];
      const placeSmall = () => cli('place', '--site', 'dc1', '--duration', '600', '--tenant', 'tenant-a', '--id', 'cli-hold', ...small);
      const full = await placeSmall();
      expect(full.code).not.toBe(0);
      expect(full.out).toContain('NO_CAPACITY');
      await caughtUp();
      expect((await cli('release', bAgain.body.holdId!)).out).toMatch(/released/);
      expect(await placeSmall()).toEqual({ code: 0, out: expect.stringMatching(/hold cli-hold on n1/) });
      await caughtUp();
      expect((await cli('ls', '--tenant', 'tenant-a', '--status', 'active')).out).toMatch(/cli-hold\s+dc1\s+tenant:tenant-a\s+active\s+n1/);

      const openapi = (await call('GET', '/v1/openapi.json')).body as unknown as { paths: Record<string, unknown> };
      expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/v1/holds', '/v1/holds/{holdId}']));
    } finally {
      clearInterval(beating);
    }
  });
});
