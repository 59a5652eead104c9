import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cliRunner.ts';
import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { firstLaneBindings } from '../../services/autonomy/bindings.ts';
import { PolicyCatalog } from '../../services/autonomy/policies.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { AutonomyEngine } from '../../services/processes/autonomyEngine/engine.ts';
import { startApi } from '../support/apiFixture.ts';
import { allOk, signalOf } from './autonomyFixture.ts';
import { publishPassOn, waitForEngine } from './passes.ts';

const cli = (api: string, dataDir: string, ...args: string[]) => runCli(api, dataDir, args);
/** The CLI with `token` (empty: the admin token in the data dir). */
const cliAs = (token: string, api: string, dataDir: string, ...args: string[]) => runCli(api, dataDir, args, token);

describe('better-compute autonomy', () => {
  it('lists, shows, approves with a signature toward the quorum, sets policies, refuses an unknown owner and halts', async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    const responder = serveCommands(env.nc, env.bus, env.log);
    const engine = new AutonomyEngine(
      env.nc,
      env.store,
      { policies: new PolicyCatalog(), bindings: firstLaneBindings, sensors: firstLaneSensors, settleMs: 60_000, budget: 5, budgetWindowMs: 3_600_000 },
      env.log,
    );
    await engine.start();
    try {
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const keyFile = join(env.dataDir, 'alice.pem');
      writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }));
      const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
      await env.bus.execute({ name: 'pki.setApprovers', payload: { approvers: [{ approverId: 'alice', publicKey: raw }], threshold: 1 }, actor: 'admin' });

      await publishPassOn(env.nc, [signalOf('node-failed', 'n1'), signalOf('node-failed', 'n2')], allOk);
      await waitForEngine(env.nc);
      await env.readers.get('autonomy')!.waitFor(await env.store.streamLastSequence(), 5_000);

      const ls = await cli(api, env.dataDir, 'autonomy', 'ls', '--pending');
      expect(ls.stdout).toMatch(/DECISIONID\s+CATEGORY\s+KEY/);
      expect(ls.stdout).toMatch(/retry\s+n1\s+1\s+pending\s+require\s+node-failed\s+metal.retry/);
      const id = decisionIdOf('retry', 'n1');
      // Under a quorum approvals take an approver token (issue 31): the admin's is refused even with the key.
      expect((await cli(api, env.dataDir, 'autonomy', 'approve', id, '--approver', 'alice', '--key', keyFile)).stderr).toMatch(/error FORBIDDEN/);
      const approverToken = (await env.app.inject({ method: 'POST', url: '/v1/tokens', payload: { role: 'approver' } })).json().token as string;
      expect((await cliAs(approverToken, api, env.dataDir, 'autonomy', 'approve', id, '--approver', 'alice', '--key', keyFile)).stdout).toMatch(
        /approved dec-/,
      );
      await env.readers.get('autonomy')!.waitFor(await env.store.streamLastSequence(), 5_000);
      const show = await cli(api, env.dataDir, 'autonomy', 'show', id);
      expect(show.stdout).toMatch(/approved alice/);
      expect(show.stdout).toMatch(/DecisionApprovalRecorded/);

      expect((await cli(api, env.dataDir, 'autonomy', 'policies', '--set', 'retry=auto')).stdout).toMatch(/retry\s+metal\s+require\s+auto/);
      expect((await cli(api, env.dataDir, 'autonomy', 'halt', '--reason', 'incident')).stdout).toMatch(/autonomy halted/);
      await env.readers.get('autonomy')!.waitFor(await env.store.streamLastSequence(), 5_000);
      expect((await env.app.inject({ url: '/v1/autonomy/controls' })).json()).toMatchObject({
        halted: true,
        haltReason: 'incident',
        overrides: { retry: 'auto' },
      });
      expect((await cli(api, env.dataDir, 'autonomy', 'pause', 'nobody')).stderr).toMatch(/error NOT_PERMITTED/);
    } finally {
      await engine.stop();
      responder.unsubscribe();
    }
  });
});
