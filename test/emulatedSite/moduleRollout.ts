import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ModuleVersionView } from '../../schemas/fleet/views.ts';
import type { RolloutDetailView } from '../../schemas/fleet/rolloutViews.ts';
import type { EmulatedMachine } from '../../scripts/emulatedSite/emulatedSite.ts';
import type { apiClient } from '../support/apiClient.ts';
import { runCli } from '../support/cliRunner.ts';
import { MODULE, MODULES_ON_HOST, resolverAuthor } from './resolverModule.ts';
import { catFile, folderEntries, linkTarget, rootFilesystemOf } from './rootFilesystem.ts';

export interface ModuleRolloutContext {
  client: ReturnType<typeof apiClient>;
  /** The admin token the CLI runs with, and the stack's data dir. */
  token: string;
  dataDir: string;
  work: string;
  vms: readonly EmulatedMachine[];
}

type HeartbeatModule = { name: string; version: string; digest: string; state: string; probes: { name: string; ok: boolean }[] };
const POLL = { timeout: 300_000, interval: 2_000 };

/**
 * Issue 35 on the deployed VMs: `resolver` 1.0.0 packed and published, assigned to both hosts by template and applied
 * by their `bcd node`; 1.1.0 rolled out with a canary of 1; 1.2.0, whose probe fails on the host, halts on the canary
 * with the other host untouched, and the rollback restores 1.1.0. Each step is checked where the user meets it: the
 * CLI's exit code, the rollout's waves, each host's signed heartbeat and, at the end, the files on each VM's disk.
 */
export async function moduleRolloutOnDeployedHosts(ctx: ModuleRolloutContext): Promise<void> {
  const started = Date.now();
  const { client } = ctx;
  const author = resolverAuthor(ctx.work, ctx.client.api, ctx.dataDir, ctx.token);
  const ids = ctx.vms.map((vm) => vm.id).sort();
  // Waves take hosts in code-point order of their ids: the first is the canary.
  const [canary, other] = ids as [string, string];
  const reported = async (nodeId: string) => (((await client.node(nodeId)).lastHeartbeat?.modules ?? []) as HeartbeatModule[]).find((m) => m.name === MODULE);
  const published = async (version: string) =>
    ((await client.getJson(`/v1/modules/${MODULE}`)).versions as ModuleVersionView[]).find((v) => v.version === version)!;
  /** What a host's signed heartbeat says once it runs `version` (active, the probe passed, the published digest). */
  const runs = async (version: string) => ({
    name: MODULE,
    version,
    digest: (await published(version)).manifestSha256,
    state: 'active',
    probes: [{ name: 'serves-zone', ok: true }],
  });
  const rollout = (id: string) => client.getJson(`/v1/rollouts/${id}`) as Promise<RolloutDetailView>;
  const outcomes = (view: RolloutDetailView) => view.waves.map((w) => w.hosts.map((h) => [h.host, h.outcome, h.restored]));

  expect((await client.command('pki.registerPublisher', { publisherId: author.publisherId, publicKey: author.publicKey })).status).toBe(201);
  expect(await author.publish('1.0.0')).toMatch(/published resolver 1\.0\.0/);
  expect((await client.command('fleet.defineTemplate', { templateId: 'dns', requires: [{ module: MODULE, range: '^1.0.0' }] })).status).toBe(201);
  for (const nodeId of ids) {
    const assigned = await client.command('fleet.assignTemplate', { nodeId, template: 'dns' });
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(201);
    expect(assigned.body.events[0].data.plan).toEqual({ [MODULE]: '1.0.0' });
  }

  // 1.0.0 onto both hosts by the operator's verb (`fleet.applyPlan`): the rollout controller sends each host the
  // `module.apply` of its pinned plan, and the CLI follows the host's heartbeats until it reports it (exit 0: healthy).
  for (const nodeId of ids) {
    const applied = await runCli(client.api, ctx.dataDir, ['assignments', 'apply', nodeId, '--follow'], ctx.token);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(new RegExp(`${nodeId}: ${MODULE} 1\\.0\\.0 active`));
  }
  for (const nodeId of ids) await expect.poll(() => reported(nodeId), POLL).toEqual(await runs('1.0.0'));

  // 1.1.0, rolled out canary first: the CLI follows it to `completed` (exit 0), each host reported it healthy.
  expect(await author.publish('1.1.0')).toMatch(/published resolver 1\.1\.0/);
  const start = (from: string, to: string) =>
    runCli(
      client.api,
      ctx.dataDir,
      ['rollouts', 'start', MODULE, from, to, '--canary', '1', '--wave-percent', '100', '--max-failures', '1', '--wave-timeout', '300000', '--follow'],
      ctx.token,
    );
  const second = await start('1.0.0', '1.1.0');
  expect(second.code, second.stdout + second.stderr).toBe(0);
  const completed = await rollout(`${MODULE}-1`);
  expect(completed.status).toBe('completed');
  expect(outcomes(completed)).toEqual([[[canary, 'healthy', null]], [[other, 'healthy', null]]]);
  // The API hears the same signed heartbeats the controller judged on (its own subscriber: a moment apart at most).
  for (const nodeId of ids) await expect.poll(() => reported(nodeId), POLL).toEqual(await runs('1.1.0'));
  // The rollout's end pins each host to what it runs: the next rollout plans from there.
  for (const nodeId of ids) {
    await expect.poll(async () => (await client.getJson(`/v1/fleet/assignments/${nodeId}`)).plan, POLL).toEqual({ [MODULE]: '1.1.0' });
  }

  // 1.2.0 ships no zone file: its probe fails on the canary, the breaker halts (exit 3) before the second wave.
  expect(await author.publish('1.2.0', { broken: true })).toMatch(/published resolver 1\.2\.0/);
  const third = await start('1.1.0', '1.2.0');
  expect(third.code, third.stdout + third.stderr).toBe(3);
  const halted = await rollout(`${MODULE}-2`);
  expect(halted).toMatchObject({ status: 'halted', startedWaves: 1, halt: { reason: 'canary_failed', failed: [canary] } });
  expect(outcomes(halted)).toEqual([[[canary, 'failed', null]], [[other, null, null]]]);
  await expect.poll(() => reported(canary), POLL).toMatchObject({ version: '1.2.0', state: 'failed', probes: [{ name: 'serves-zone', ok: false }] });
  expect(await reported(other)).toEqual(await runs('1.1.0'));

  // The rollback puts 1.1.0 back on the canary, the only host that took 1.2.0 (exit 4: rolled back).
  const back = await runCli(client.api, ctx.dataDir, ['rollouts', 'rollback', `${MODULE}-2`, '--follow'], ctx.token);
  expect(back.code, back.stdout + back.stderr).toBe(4);
  const rolledBack = await rollout(`${MODULE}-2`);
  expect(rolledBack).toMatchObject({ status: 'rolled-back', rollbackTargets: [canary] });
  expect(outcomes(rolledBack)).toEqual([[[canary, 'failed', 'healthy']], [[other, null, null]]]);
  for (const nodeId of ids) await expect.poll(() => reported(nodeId), POLL).toEqual(await runs('1.1.0'));

  // On each VM's disk (read from the host side): `current` is 1.1.0, whose files are its; the other host never had 1.2.0.
  for (const vm of ctx.vms) {
    const root = rootFilesystemOf(vm.disk, join(ctx.work, `${vm.id}-root.ext4`));
    expect(linkTarget(root, `${MODULES_ON_HOST}/current`), vm.id).toBe('1.1.0');
    expect(catFile(root, `${MODULES_ON_HOST}/1.1.0/bin/resolver`), vm.id).toMatch(/^echo "resolver 1\.1\.0 serving/m);
    expect(catFile(root, `${MODULES_ON_HOST}/1.1.0/share/resolver.zone`), vm.id).toBe('zone of 1.1.0\n');
    const versions = folderEntries(root, MODULES_ON_HOST)
      .filter((e) => /^\d/.test(e))
      .sort();
    expect(versions, vm.id).toEqual(vm.id === canary ? ['1.1.0', '1.2.0'] : ['1.0.0', '1.1.0']);
    rmSync(root);
  }
  process.stdout.write(`emulated site e2e: modules and rollouts on both hosts took ${Math.round((Date.now() - started) / 1000)} s\n`);
}
