import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { runCli } from '../support/cliRunner.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { publishNginx } from './publishedModule.ts';

describe('rollouts: through the API, the controller commands and the CLI, against a real nats-server', () => {
  it('plans, starts, halts on a failed wave, refuses a second rollout, rolls back exactly the completed hosts, aborts', { timeout: 120_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    const operator = { actor: 'test' };
    await publishNginx(app, bus, ['1.24.0', '1.26.1']);
    for (const nodeId of ['n1', 'n2', 'n3']) {
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), ...operator });
      await bus.execute({ name: 'fleet.pinModule', payload: { nodeId, module: 'nginx', version: '1.24.0' }, ...operator });
    }
    const seq = await env.store.streamLastSequence();
    const openapi = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([
        '/v1/rollouts',
        '/v1/rollouts/plan',
        '/v1/rollouts/{rolloutId}',
        '/v1/rollouts/{rolloutId}/{verb}',
        '/v1/commands/fleet.startRollout',
      ]),
    );
    const plan = {
      module: 'nginx',
      fromVersion: '1.24.0',
      toVersion: '1.26.1',
      canarySize: 1,
      wavePercent: 50,
      maxConsecutiveFailures: 2,
      waveTimeoutMs: 60_000,
    };

    // The plan (what an approver signs), then the start of exactly that plan; the hosts come from the read model.
    const before = await env.store.streamLastSequence();
    const preview = await app.inject({ method: 'POST', url: `/v1/rollouts/plan?minSeq=${seq}`, payload: plan });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({ hosts: ['n1', 'n2', 'n3'], waves: [['n1'], ['n2'], ['n3']] });
    expect(await env.store.streamLastSequence()).toBe(before);
    // An approver reads the plan it signs; starting one is an operator's.
    const approver = (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 'ap1', role: 'approver' } })).json();
    const asApprover = { authorization: `Bearer ${approver.token}` };
    expect((await app.inject({ method: 'POST', url: '/v1/rollouts/plan', payload: plan, headers: asApprover })).json().planDigest).toBe(
      preview.json().planDigest,
    );
    expect((await app.inject({ method: 'POST', url: '/v1/rollouts', payload: plan, headers: asApprover })).json().code).toBe('FORBIDDEN');
    const started = await app.inject({ method: 'POST', url: `/v1/rollouts?minSeq=${seq}`, payload: { ...plan, planDigest: preview.json().planDigest } });
    expect(started.statusCode, started.body).toBe(201);
    expect(started.json().events[0]).toMatchObject({ type: 'RolloutStarted', data: { rolloutId: 'nginx-1', planDigest: preview.json().planDigest } });
    const other = await app.inject({ method: 'POST', url: '/v1/rollouts', payload: { ...plan, hosts: ['n1'] } });
    expect([other.statusCode, other.json().code]).toEqual([409, 'ROLLOUT_IN_PROGRESS']);

    // The controller's seam: the canary healthy, wave 1's host failed: the wave halts; wave 2 cannot start.
    const engine = (name: string, payload: Record<string, unknown>) =>
      bus.execute({ name, payload: { rolloutId: 'nginx-1', ...payload }, actor: 'rollout-controller' });
    await engine('fleet.startWave', { wave: 0 });
    await engine('fleet.recordHostOutcome', { host: 'n1', outcome: 'healthy' });
    await engine('fleet.startWave', { wave: 1 });
    const failed = await engine('fleet.recordHostOutcome', { host: 'n2', outcome: 'failed' });
    expect(failed.events.map((e) => e.type)).toEqual(['RolloutHostReported', 'RolloutHalted']);
    expect((await engine('fleet.recordHostOutcome', { host: 'n2', outcome: 'healthy' })).events).toEqual([]);
    await expect(engine('fleet.startWave', { wave: 2 })).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });

    const shown = await app.inject({ method: 'GET', url: `/v1/rollouts/nginx-1?minSeq=${failed.seq}` });
    expect(shown.json()).toMatchObject({
      status: 'halted',
      startedWaves: 2,
      halt: { reason: 'wave_failed', failed: ['n2'] },
      waves: [
        { wave: 0, hosts: [{ host: 'n1', outcome: 'healthy' }] },
        { wave: 1, hosts: [{ host: 'n2', outcome: 'failed' }] },
        { wave: 2, deadline: null, hosts: [{ host: 'n3', outcome: null }] },
      ],
    });
    const verb = (id: string, name: string) => app.inject({ method: 'POST', url: `/v1/rollouts/${id}/${name}` });
    expect((await verb('nginx-1', 'pause')).json().code).toBe('ILLEGAL_TRANSITION');

    // Rollback: exactly the hosts that took the new version; the second ask is the first.
    const rollback = await verb('nginx-1', 'rollback');
    expect(rollback.statusCode, rollback.body).toBe(201);
    expect(rollback.json().events[0].data).toMatchObject({ version: '1.24.0', targets: ['n1', 'n2'] });
    expect([(await verb('nginx-1', 'rollback')).statusCode, (await verb('nginx-1', 'rollback')).json().events]).toEqual([200, []]);
    await engine('fleet.recordHostRestored', { host: 'n1', outcome: 'healthy' });
    const done = await engine('fleet.recordHostRestored', { host: 'n2', outcome: 'healthy' });
    expect(done.events.at(-1)).toMatchObject({ type: 'RolloutRolledBack', data: { restored: ['n1', 'n2'], failed: [] } });
    const rolledBack = (await app.inject({ method: 'GET', url: `/v1/rollouts/nginx-1?minSeq=${done.seq}` })).json();
    expect(rolledBack).toMatchObject({ status: 'rolled-back', rollbackTargets: ['n1', 'n2'] });
    expect(rolledBack.waves[1].hosts[0]).toMatchObject({ host: 'n2', restored: 'healthy' });

    // The CLI over the same API: a second rollout of the module may start now; pause, resume, abort, ls and show.
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    const cli = (...args: string[]) => runCli(api, env.dataDir, args, env.adminToken);
    const dry = await cli('rollouts', 'start', 'nginx', '1.24.0', '1.26.1', '--canary', '2', '--dry-run');
    expect(dry.stdout, dry.stderr).toMatch(/on 3 host\(s\)[\s\S]*wave 0 \(canary\): n1, n2\n {2}wave 1: n3/);
    const second = await cli('rollouts', 'start', 'nginx', '1.24.0', '1.26.1', '--canary', '2');
    expect(second.stdout, second.stderr).toMatch(/started nginx-2/);
    expect((await cli('rollouts', 'pause', 'nginx-2')).stdout).toMatch(/nginx-2: RolloutPaused/);
    expect((await cli('rollouts', 'pause', 'nginx-2')).stdout).toMatch(/nginx-2: unchanged/);
    expect((await cli('rollouts', 'resume', 'nginx-2')).stdout).toMatch(/RolloutResumed/);
    expect((await cli('rollouts', 'abort', 'nginx-2')).stdout).toMatch(/RolloutAborted/);
    const refused = await cli('rollouts', 'continue', 'nginx-2');
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/ILLEGAL_TRANSITION/)]);
    await env.readers.get('modules')!.waitFor(await env.store.streamLastSequence(), 5_000);
    expect((await cli('rollouts', 'ls')).stdout).toMatch(
      /nginx-2\s+nginx\s+1\.24\.0 → 1\.26\.1\s+aborted[\s\S]*nginx-1\s+nginx\s+1\.24\.0 → 1\.26\.1\s+rolled-back/,
    );
    expect((await cli('rollouts', 'show', 'nginx-1')).stdout).toMatch(
      /nginx-1: nginx 1\.24\.0 → 1\.26\.1, rolled-back, wave 2\/3; last halt wave_failed \(failed: n2\)/,
    );
  });
});
