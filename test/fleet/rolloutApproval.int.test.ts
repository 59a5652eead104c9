import { spawn } from 'node:child_process';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rolloutApprovalMessage } from '../../schemas/trust/approvals.ts';
import { startApi } from '../support/apiFixture.ts';
import { runCli } from '../support/cliRunner.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { publishNginx } from './publishedModule.ts';

const bin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));

/** A CLI run whose output is read while it runs: `rollouts … --follow` streams, so the test waits on what it printed. */
function streamCli(api: string, dataDir: string, token: string, args: readonly string[]) {
  const child = spawn(process.execPath, [bin, '--api', api, ...args], { env: { ...process.env, BC_DATA_DIR: dataDir, BC_API_TOKEN: token } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return {
    exited,
    output: () => stdout,
    async printed(pattern: RegExp, timeoutMs = 20_000): Promise<void> {
      const until = Date.now() + timeoutMs;
      while (!pattern.test(stdout)) {
        if (Date.now() > until) throw new Error(`no ${String(pattern)} in:\n${stdout}\n${stderr}`);
        await sleep(50);
      }
    },
    [Symbol.dispose]: () => child.kill(),
  };
}

function approverKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
}
const signed = (key: KeyObject, rolloutId: string, planDigest: string) =>
  sign(null, rolloutApprovalMessage('approve', { rolloutId, planDigest }), key).toString('base64');

describe('a rollout is a require decision: approvers sign its plan digest before its first wave (real nats-server)', () => {
  it('awaits approval; refuses another digest, a non-approver key and a replayed approval; the CLI follows it to its end', { timeout: 120_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    await publishNginx(app, bus, ['1.24.0', '1.26.1']);
    for (const nodeId of ['n1', 'n2', 'n3']) {
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
      await bus.execute({ name: 'fleet.pinModule', payload: { nodeId, module: 'nginx', version: '1.24.0' }, actor: 'test' });
    }
    const alice = approverKey();
    const mallory = approverKey();
    const quorum = { approvers: [{ approverId: 'alice', publicKey: alice.publicKey }], threshold: 1 };
    expect((await app.inject({ method: 'POST', url: '/v1/commands/pki.setApprovers', payload: quorum })).statusCode).toBe(201);
    const approverToken = (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 'ap1', role: 'approver' } })).json().token as string;
    const asApprover = { authorization: `Bearer ${approverToken}` };
    const plan = {
      module: 'nginx',
      fromVersion: '1.24.0',
      toVersion: '1.26.1',
      canarySize: 1,
      wavePercent: 50,
      maxConsecutiveFailures: 2,
      waveTimeoutMs: 60_000,
    };
    const seq = await env.store.streamLastSequence();

    // The start records the plan and waits: no wave may start before an approval.
    const started = await app.inject({ method: 'POST', url: `/v1/rollouts?minSeq=${seq}`, payload: plan });
    expect(started.statusCode, started.body).toBe(201);
    const { planDigest } = started.json().events[0].data as { planDigest: string };
    expect(started.json().events[0].data).toMatchObject({ rolloutId: 'nginx-1', approvalsRequired: 1 });
    const engine = (rolloutId: string, name: string, payload: Record<string, unknown> = {}) =>
      bus.execute({ name, payload: { rolloutId, ...payload }, actor: 'rollout-controller' });
    await expect(engine('nginx-1', 'fleet.startWave', { wave: 0 })).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
    const shown = (await app.inject({ url: `/v1/rollouts/nginx-1?minSeq=${started.json().seq}` })).json();
    expect(shown).toMatchObject({ status: 'awaiting-approval', approvalsRequired: 1, approvals: [], planDigest });

    // Refusals, each with its code, and nothing appended for any of them.
    const approve = (rolloutId: string, body: object, headers: Record<string, string> = asApprover) =>
      app.inject({ method: 'POST', url: `/v1/rollouts/${rolloutId}/approve`, payload: body, headers });
    const other = 'f'.repeat(64);
    const before = await env.store.streamLastSequence();
    const refusals = [
      await approve('nginx-1', { planDigest: other, approverId: 'alice', signature: signed(alice.privateKey, 'nginx-1', other) }),
      await approve('nginx-1', { planDigest, approverId: 'mallory', signature: signed(mallory.privateKey, 'nginx-1', planDigest) }),
      await approve('nginx-1', { planDigest, approverId: 'alice', signature: signed(mallory.privateKey, 'nginx-1', planDigest) }),
      // Who operates or administers does not approve, even holding a valid signature.
      await approve('nginx-1', { planDigest, approverId: 'alice', signature: signed(alice.privateKey, 'nginx-1', planDigest) }, {}),
    ];
    expect(refusals.map((r) => [r.statusCode, r.json().code])).toEqual([
      [409, 'PLAN_DIGEST_MISMATCH'],
      [403, 'APPROVER_UNKNOWN'],
      [403, 'APPROVAL_SIGNATURE_INVALID'],
      [403, 'FORBIDDEN'],
    ]);
    expect(await env.store.streamLastSequence()).toBe(before);

    // Withdrawn, then started again with the same plan: alice's signature of nginx-1 does not approve nginx-2.
    expect((await app.inject({ method: 'POST', url: '/v1/rollouts/nginx-1/abort' })).statusCode).toBe(201);
    const again = await app.inject({ method: 'POST', url: '/v1/rollouts', payload: plan });
    expect(again.json().events[0].data).toMatchObject({ rolloutId: 'nginx-2', planDigest });
    const replayed = await approve('nginx-2', { planDigest, approverId: 'alice', signature: signed(alice.privateKey, 'nginx-1', planDigest) });
    expect([replayed.statusCode, replayed.json().code]).toEqual([409, 'APPROVAL_REPLAYED']);
    await expect(engine('nginx-2', 'fleet.startWave', { wave: 0 })).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });

    // The CLI: `show --follow` streams from the wait for approval; `approve` signs with alice's key; the controller's
    // commands drive the waves; the follow stops at the halt with exit code 3, `rollback --follow` at the end with 4.
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    const keyFile = join(env.dataDir, 'alice.pem');
    writeFileSync(keyFile, alice.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    using follow = streamCli(api, env.dataDir, env.adminToken, ['rollouts', 'show', 'nginx-2', '--follow']);
    await follow.printed(/nginx-2: awaiting-approval/);
    const wrong = await runCli(
      api,
      env.dataDir,
      ['rollouts', 'approve', 'nginx-2', '--approver', 'alice', '--key', keyFile, '--plan-digest', other],
      approverToken,
    );
    expect([wrong.code, wrong.stderr]).toEqual([1, expect.stringMatching(/error PLAN_DIGEST_MISMATCH/)]);
    const approved = await runCli(api, env.dataDir, ['rollouts', 'approve', 'nginx-2', '--approver', 'alice', '--key', keyFile], approverToken);
    expect(approved.stdout, approved.stderr).toMatch(/nginx-2: approved \(plan [0-9a-f]{64}\); its canary starts/);
    await follow.printed(/nginx-2: approved by alice \(1\/1\)/);
    await engine('nginx-2', 'fleet.startWave', { wave: 0 });
    await follow.printed(/wave 0 \(canary\) started: n1/);
    await engine('nginx-2', 'fleet.recordHostOutcome', { host: 'n1', outcome: 'healthy' });
    await engine('nginx-2', 'fleet.startWave', { wave: 1 });
    await engine('nginx-2', 'fleet.recordHostOutcome', { host: 'n2', outcome: 'failed' });
    expect(await follow.exited).toBe(3);
    const lines = follow.output();
    for (const line of [
      /nginx-2: awaiting-approval/,
      /nginx-2: approved by alice \(1\/1\)/,
      /nginx-2: wave 0 \(canary\) started: n1/,
      /nginx-2: n1 \(wave 0\) healthy/,
      /nginx-2: wave 1 started: n2/,
      /nginx-2: n2 \(wave 1\) failed/,
      /nginx-2: halted: wave_failed \(failed: n2\)/,
    ]) {
      expect(lines).toMatch(line);
    }
    expect(lines.indexOf('awaiting-approval')).toBeLessThan(lines.indexOf('approved by alice'));
    expect(lines.indexOf('approved by alice')).toBeLessThan(lines.indexOf('wave 0 (canary) started'));
    expect(lines.indexOf('n2 (wave 1) failed')).toBeLessThan(lines.indexOf('halted: wave_failed'));

    using rollback = streamCli(api, env.dataDir, env.adminToken, ['rollouts', 'rollback', 'nginx-2', '--follow']);
    await rollback.printed(/nginx-2: RolloutRollbackStarted/);
    await engine('nginx-2', 'fleet.recordHostRestored', { host: 'n1', outcome: 'healthy' });
    await engine('nginx-2', 'fleet.recordHostRestored', { host: 'n2', outcome: 'healthy' });
    expect(await rollback.exited).toBe(4);
    expect(rollback.output()).toMatch(/nginx-2: n2 restored to 1\.24\.0: healthy[\s\S]*nginx-2: rolled-back/);
  });
});
