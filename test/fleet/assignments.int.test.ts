import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assignmentAggregate } from '../../services/fleet/assignment/assignment.ts';
import { startApi } from '../support/apiFixture.ts';
import { runCli } from '../support/cliRunner.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { publishNginx } from './publishedModule.ts';

describe('assignments: a per-host plan through the API and the CLI, against a real nats-server', () => {
  it('publishes two versions, defines a template, dry-runs, assigns, pins and reads back', { timeout: 120_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    const operator = { actor: 'test' };
    await publishNginx(app, bus, ['1.24.0', '1.26.1']);
    await bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), ...operator });
    const command = (name: string, payload: Record<string, unknown>) => app.inject({ method: 'POST', url: `/v1/commands/${name}`, payload });
    const defined = await command('fleet.defineTemplate', { templateId: 'web', requires: [{ module: 'nginx', range: '^1.24' }] });
    expect(defined.statusCode, defined.body).toBe(201);

    // The dry run reads the log and appends nothing.
    const dryRun = (nodeId: string, body: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: `/v1/fleet/assignments/${nodeId}/dry-run`, payload: body });
    const before = await env.store.streamLastSequence();
    const preview = await dryRun('n1', { template: 'web' });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({
      ok: true,
      plan: { nginx: '1.26.1' },
      diff: { added: [{ module: 'nginx', to: '1.26.1' }], removed: [], changed: [] },
    });
    expect(await env.store.streamLastSequence()).toBe(before);
    expect((await dryRun('nowhere', { template: 'web' })).json().code).toBe('NOT_FOUND');

    const assigned = await command('fleet.assignTemplate', { nodeId: 'n1', template: 'web' });
    expect(assigned.statusCode, assigned.body).toBe(201);
    expect(assigned.json().events[0].data.planDigest).toBe(preview.json().planDigest);
    const again = await command('fleet.assignTemplate', { nodeId: 'n1', template: 'web' });
    expect([again.statusCode, again.json().events]).toEqual([200, []]);
    const shown = await app.inject({ method: 'GET', url: `/v1/fleet/assignments/n1?minSeq=${assigned.json().seq}` });
    expect(shown.json()).toMatchObject({ nodeId: 'n1', template: 'web', pins: [], plan: { nginx: '1.26.1' } });
    const listed = await app.inject({ method: 'GET', url: `/v1/fleet/assignments?module=nginx&minSeq=${assigned.json().seq}` });
    expect(listed.json()).toEqual({ items: [shown.json()], nextCursor: null });
    expect((await app.inject({ method: 'GET', url: '/v1/fleet/assignments?template=edge' })).json()).toEqual({ items: [], nextCursor: null });
    expect((await app.inject({ method: 'GET', url: '/v1/fleet/assignments?cursor=nope' })).json().code).toBe('VALIDATION_FAILED');

    // A pin's dry run diffs from the current plan; a pin of a version nothing published is refused with the conflict.
    expect((await dryRun('n1', { pins: [{ module: 'nginx', version: '1.24.0' }] })).json()).toMatchObject({
      template: 'web',
      diff: { changed: [{ module: 'nginx', from: '1.26.1', to: '1.24.0' }] },
    });
    const conflict = await command('fleet.pinModule', { nodeId: 'n1', module: 'nginx', version: '9.9.9' });
    expect([conflict.statusCode, conflict.json().code, conflict.json().issues.map((i: { path: string }) => i.path)]).toEqual([
      409,
      'CLOSURE_CONFLICT',
      ['RANGE_UNSATISFIABLE'],
    ]);
    expect((await dryRun('n1', { pins: [{ module: 'nginx', version: '9.9.9' }] })).json()).toMatchObject({
      ok: false,
      plan: null,
      diff: null,
      conflicts: [{ code: 'RANGE_UNSATISFIABLE', module: 'nginx' }],
    });

    // The CLI: templates and assignments over the same API.
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    const work = mkdtempSync(join(tmpdir(), 'bc-assign-cli-'));
    const cli = (...args: string[]) => runCli(api, env.dataDir, args, env.adminToken);
    try {
      writeFileSync(join(work, 'edge.json'), JSON.stringify({ templateId: 'edge', requires: [{ module: 'nginx', range: '~1.24' }] }));
      expect((await cli('templates', 'define', join(work, 'edge.json'))).stdout).toMatch(/defined template edge/);
      const dry = await cli('assignments', 'set', 'n1', '--template', 'edge', '--dry-run');
      expect(dry.stdout).toMatch(/~ nginx 1\.26\.1 → 1\.24\.0/);
      const set = await cli('assignments', 'set', 'n1', '--template', 'edge', '--pin', 'nginx@1.24.0');
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toMatch(/nginx\s+1\.24\.0/);
      const state = (await bus.repository.load(assignmentAggregate, 'n1')).state;
      expect(state).toMatchObject({ template: 'edge', pins: [{ module: 'nginx', version: '1.24.0' }], plan: { nginx: '1.24.0' } });
      await env.readers.get('modules')!.waitFor(await env.store.streamLastSequence(), 5_000);
      expect((await cli('assignments', 'show', 'n1')).stdout).toMatch(/n1: template edge, pins nginx@1\.24\.0/);
      expect((await cli('templates', 'ls')).stdout).toMatch(/edge\s+nginx ~1\.24/);
      expect((await cli('templates', 'show', 'edge')).stdout).toMatch(/edge: includes \(none\); 1 host\(s\)/);
      const refused = await cli('assignments', 'pin', 'n1', 'nginx@9.9.9');
      expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/error CLOSURE_CONFLICT[\s\S]*RANGE_UNSATISFIABLE: nginx/)]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
