import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { rolloutApprovalMessage } from '../../schemas/trust/approvals.ts';
import { startApi } from '../support/apiFixture.ts';
import { runCli } from '../support/cliRunner.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { publishNginx } from './publishedModule.ts';

function approverKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
}
const signed = (verdict: 'approve' | 'reject', key: KeyObject, rolloutId: string, planDigest: string) =>
  sign(null, rolloutApprovalMessage(verdict, { rolloutId, planDigest }), key).toString('base64');

describe('a rollout awaiting approval is rejected by one approver, or expires (real nats-server)', () => {
  it(
    'rejects through the API and the CLI with its refusals; past its window an approval is refused and the rollout expires',
    { timeout: 120_000 },
    async () => {
      await using env = await startApi();
      const { app, bus } = env;
      await publishNginx(app, bus, ['1.24.0', '1.26.1']);
      for (const nodeId of ['n1', 'n2']) {
        await bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
        await bus.execute({ name: 'fleet.pinModule', payload: { nodeId, module: 'nginx', version: '1.24.0' }, actor: 'test' });
      }
      const alice = approverKey();
      const bob = approverKey();
      const quorum = {
        approvers: [
          { approverId: 'alice', publicKey: alice.publicKey },
          { approverId: 'bob', publicKey: bob.publicKey },
        ],
        threshold: 2,
        approvalTtlSeconds: 60,
      };
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
      const startedAt = Date.now();
      const started = await app.inject({ method: 'POST', url: `/v1/rollouts?minSeq=${seq}`, payload: plan });
      expect(started.statusCode, started.body).toBe(201);
      const { planDigest, approvalExpiresAt } = started.json().events[0].data as { planDigest: string; approvalExpiresAt: string };
      expect(Date.parse(approvalExpiresAt) - startedAt).toBeGreaterThanOrEqual(60_000 - 1_000);
      expect(Date.parse(approvalExpiresAt) - startedAt).toBeLessThanOrEqual(60_000 + 5_000);
      const shown = (await app.inject({ url: `/v1/rollouts/nginx-1?minSeq=${started.json().seq}` })).json();
      expect(shown).toMatchObject({ status: 'awaiting-approval', approvalExpiresAt, rejectedBy: null });

      const post = (rolloutId: string, verb: 'approve' | 'reject', body: object, headers: Record<string, string> = asApprover) =>
        app.inject({ method: 'POST', url: `/v1/rollouts/${rolloutId}/${verb}`, payload: body, headers });
      const before = await env.store.streamLastSequence();
      const other = 'f'.repeat(64);
      const refusals = [
        await post('nginx-1', 'reject', { planDigest, approverId: 'bob', signature: signed('approve', bob.privateKey, 'nginx-1', planDigest) }),
        await post('nginx-1', 'reject', { planDigest: other, approverId: 'bob', signature: signed('reject', bob.privateKey, 'nginx-1', other) }),
        // Who operates or administers does not reject, even holding a valid signature.
        await post('nginx-1', 'reject', { planDigest, approverId: 'bob', signature: signed('reject', bob.privateKey, 'nginx-1', planDigest) }, {}),
      ];
      expect(refusals.map((r) => [r.statusCode, r.json().code])).toEqual([
        [403, 'APPROVAL_SIGNATURE_INVALID'],
        [409, 'PLAN_DIGEST_MISMATCH'],
        [403, 'FORBIDDEN'],
      ]);
      expect(await env.store.streamLastSequence()).toBe(before);

      // Alice approves (1 of 2); bob rejects with the CLI: the rollout ends, and nothing counts after.
      expect(
        (await post('nginx-1', 'approve', { planDigest, approverId: 'alice', signature: signed('approve', alice.privateKey, 'nginx-1', planDigest) }))
          .statusCode,
      ).toBe(201);
      await env.app.listen({ port: 0, host: '127.0.0.1' });
      const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
      const keyFile = join(env.dataDir, 'bob.pem');
      writeFileSync(keyFile, bob.privateKey.export({ format: 'pem', type: 'pkcs8' }));
      const rejected = await runCli(api, env.dataDir, ['rollouts', 'reject', 'nginx-1', '--approver', 'bob', '--key', keyFile], approverToken);
      expect(rejected.stdout, rejected.stderr).toMatch(/nginx-1: rejected \(plan [0-9a-f]{64}\); no host is touched/);
      const late = await post('nginx-1', 'approve', { planDigest, approverId: 'bob', signature: signed('approve', bob.privateKey, 'nginx-1', planDigest) });
      expect([late.statusCode, late.json().code]).toEqual([409, 'ILLEGAL_TRANSITION']);
      await expect(bus.execute({ name: 'fleet.startWave', payload: { rolloutId: 'nginx-1', wave: 0 }, actor: 'rollout-controller' })).rejects.toMatchObject({
        code: 'ILLEGAL_TRANSITION',
      });
      const followed = await runCli(api, env.dataDir, ['rollouts', 'show', 'nginx-1', '--follow'], env.adminToken);
      expect([followed.code, followed.stdout]).toEqual([6, expect.stringMatching(/nginx-1: rejected by bob/)]);

      // The module is free again. The window of nginx-2 is open: its expiry is refused; past it (the clock moved a minute
      // on), an approval is refused and the controller's expiry ends it.
      const again = await app.inject({ method: 'POST', url: '/v1/rollouts', payload: plan });
      expect(again.json().events[0].data).toMatchObject({ rolloutId: 'nginx-2', planDigest });
      const expire = () =>
        bus.execute({ name: 'fleet.expireRolloutApproval', payload: { rolloutId: 'nginx-2' }, actor: 'rollout-controller', commandId: 'expire-nginx-2' });
      await expect(expire()).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
      try {
        const tooLate = await post('nginx-2', 'approve', {
          planDigest,
          approverId: 'alice',
          signature: signed('approve', alice.privateKey, 'nginx-2', planDigest),
        });
        expect([tooLate.statusCode, tooLate.json().code]).toEqual([409, 'APPROVAL_EXPIRED']);
        // The refused expiry is asked again under the same id, as the controller does on its next tick.
        const result = await expire();
        expect(result.events.map((e) => e.type)).toEqual(['RolloutApprovalExpired']);
        expect(await expire()).toMatchObject({ duplicate: true });
      } finally {
        vi.useRealTimers();
      }
      const ended = await runCli(api, env.dataDir, ['rollouts', 'show', 'nginx-2', '--follow'], env.adminToken);
      expect([ended.code, ended.stdout]).toEqual([7, expect.stringMatching(/nginx-2: approval-expired at \S+ \(0\/2 approvals\)/)]);
    },
  );
});
