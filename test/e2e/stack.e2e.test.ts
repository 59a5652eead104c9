import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/freePort.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { startStackProcess } from '../support/stackProcess.ts';
import { enrollPayload } from '../support/commandPayloads.ts';

const post = (stack: { api: string; token: string }, name: string, body: unknown) =>
  fetch(`${stack.api}/v1/commands/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.token}` },
    body: JSON.stringify(body),
  });
const get = (stack: { api: string; token: string }, path: string) => fetch(`${stack.api}${path}`, { headers: { authorization: `Bearer ${stack.token}` } });

const enroll = enrollPayload;

const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

/** nats-server processes whose command line names `storeDir`: the embedded server of one stack. */
const natsServerPids = (storeDir: string) => {
  try {
    return execFileSync('pgrep', ['-f', `nats-server .*${storeDir}`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
};

describe('npm start', () => {
  it('runs the stack on an embedded nats-server with a simulated site, and stops it on exit', { timeout: 180_000 }, async () => {
    using dir = tempDir();
    const stack = await startStackProcess({ BC_DATA_DIR: dir.path, BC_SIM_MACHINES: '2', BC_SIM_BMC_PORT_BASE: '0' }, await freePort());
    try {
      expect(natsServerPids(dir.path)).toHaveLength(1);
      // BC_PROCESS_LAYOUT=compact, the default: the step path shares one process; the API and the rest keep their own.
      const groups = stack.serveGroups();
      expect(groups).toContainEqual(['projectors', 'commands', 'join', 'workflow-orchestrator', 'workflow-executor']);
      expect(groups).toContainEqual(['api']);
      expect(groups).toContainEqual(['bmc-monitor']);
      expect(groups.flat()).toHaveLength(new Set(groups.flat()).size);
      await expect.poll(async () => (await json(get(stack, '/v1/nodes?siteId=sim'))).items.length, { timeout: 90_000 }).toBe(2);
      expect((await post(stack, 'site.create', { siteId: 'dc1', name: 'DC 1' })).status).toBe(201);
      const results = await Promise.all(['a1', 'a2', 'a3'].map((id) => json(post(stack, 'metal.enroll', enroll(id)))));
      const maxSeq = Math.max(...results.map((r: { seq: number }) => r.seq));
      const page = await json(get(stack, `/v1/nodes?siteId=dc1&minSeq=${maxSeq}`));
      // Enrolled nodes are inspected on their own; these have no reachable BMC, so they stay in the first states.
      expect(page.items.map((n: { nodeId: string }) => n.nodeId)).toEqual(['a1', 'a2', 'a3']);
      for (const n of page.items) expect(['enrolled', 'inspecting']).toContain(n.state);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
    expect(natsServerPids(dir.path)).toEqual([]);
  });

  it('runs against an existing server named by BC_NATS_URL, and keeps its data across restarts', { timeout: 180_000 }, async () => {
    await using nats = await startTestNats();
    using dir = tempDir();
    // The test's server lets anyone in: the stack uses it only when told to run without broker auth.
    // Every service in a process of its own (`split`), which keeps data across restarts the same way.
    const env = { BC_DATA_DIR: dir.path, BC_NATS_URL: nats.url, BC_NATS_AUTH: 'none', BC_SIM_MACHINES: '0', BC_PROCESS_LAYOUT: 'split' };
    const port = await freePort();
    const first = await startStackProcess(env, port);
    expect(first.serveGroups()).toContainEqual(['workflow-executor']);
    expect(first.serveGroups().every((group) => group.length === 1 || group.join('+') === 'fleet-sensors+autonomy-engine+rollout-controller')).toBe(true);
    await post(first, 'site.create', { siteId: 'dc1', name: 'DC 1' });
    const seq = (await json(post(first, 'metal.enroll', enroll('keep-1')))).seq;
    expect((await get(first, `/v1/nodes/keep-1?minSeq=${seq}`)).status).toBe(200);
    expect(await first.stop()).toBe(0);

    await using second = await startStackProcess(env, port);
    // The bootstrap admin token lives in the log: a restart keeps it and makes no new one.
    expect(second.token).toBe(first.token);
    expect(await json(get(second, '/v1/nodes/keep-1'))).toMatchObject({ nodeId: 'keep-1', siteId: 'dc1' });
    const again = await post(second, 'metal.enroll', enroll('keep-1'));
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe('ALREADY_EXISTS');
  });
});
