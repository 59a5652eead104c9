import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
// The plugin side is written as an outside package would: only the public entry.
import { definePlugin, defineProfile, defineStep, fromStep } from 'better-compute/sdk';
import { runPlugin, type RunningPlugin } from 'better-compute/sdk/worker';
import { PluginCatalog } from '../../services/plugins/pluginCatalog.ts';
import { validateProfile } from '../../services/plugins/profileCatalog.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { enrollPayload, startEngine } from '../metal/engineFixture.ts';
import { startFakeAgent } from '../metal/fakeAgent.ts';

const refusalOf = (started: Promise<RunningPlugin>) =>
  started.then(
    async (p) => (await p.stop(), 'no error'),
    (err: { code?: string }) => err.code,
  );

/** Which replica ran which attempt, and a gate that holds `acme.check` while a test needs it held. */
const ranBy: { step: string; replica: string; key: string }[] = [];
let holdCheck: Promise<void> | null = null;
let replicaName = 'a';

function acmePlugin(replica: string) {
  const stamp = defineStep({
    id: 'acme.stamp',
    runsOn: 'control-plane',
    input: z.object({}),
    output: z.object({ stamp: z.string(), url: z.string().url() }),
    run: async (ctx) => {
      ranBy.push({ step: 'acme.stamp', replica, key: ctx.idempotencyKey });
      const seed = ctx.renderTemplate('node={{nodeId}}\n', { nodeId: ctx.node.nodeId });
      const blob = await ctx.blobs.put(new TextEncoder().encode(seed), { name: 'seed.txt' });
      return { stamp: `${ctx.node.nodeId}:${ctx.idempotencyKey}`, url: blob.url };
    },
  });
  const check = defineStep({
    id: 'acme.check',
    runsOn: 'control-plane',
    input: z.object({ stamp: z.string() }),
    run: async (ctx) => {
      ranBy.push({ step: 'acme.check', replica, key: ctx.idempotencyKey });
      if (holdCheck)
        await Promise.race([holdCheck, new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)))]);
      return { seen: ctx.input.stamp };
    },
  });
  const profile = defineProfile({
    id: 'acme-stamped',
    version: 1,
    target: 'metal',
    role: 'deploy',
    steps: [
      { id: 'acme.stamp', runsOn: 'control-plane' },
      { id: 'acme.check', runsOn: 'control-plane', params: { stamp: fromStep('acme.stamp', 'stamp') } },
    ],
  });
  return definePlugin({
    id: 'acme-stamp',
    version: '1.0.0',
    steps: [stamp, check],
    profiles: [profile],
    drivers: [{ id: 'acme-bmc', kind: 'bmc', description: 'Acme BMC dialect' }],
  });
}

describe('plugins as standalone consumer services', () => {
  it('register, take only their own work, hand work over between replicas and resume after dying', { timeout: 120_000 }, async () => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    const config = loadConfig({}, { natsUrl: env.nats.url, natsAuth: 'none', dataDir: env.dataDir, logLevel: 'silent' });
    const pluginEnv = { BC_WORK_ACK_WAIT_MS: '1500' };
    const catalog = new PluginCatalog(env.nc, env.store);
    const replicas: RunningPlugin[] = [];
    const start = async (name: string) => {
      replicaName = name;
      const running = await runPlugin(acmePlugin(name), { config, env: pluginEnv });
      replicas.push(running);
      return running;
    };
    try {
      await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
      for (const n of ['n1', 'n2', 'n3']) await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(n), actor: 'test' });
      for (const n of ['n1', 'n2', 'n3']) await env.waitForNode(n, (s) => s.exists && s.state === 'ready');

      expect(validateProfile(await catalog.registry(), acmePlugin('x').profiles[0])).toMatchObject([
        { code: 'STEP_UNKNOWN', stepId: 'acme.stamp' },
        { code: 'STEP_UNKNOWN', stepId: 'acme.check' },
      ]);
      const a = await start('a');
      const registry = await catalog.registry();
      expect(validateProfile(registry, acmePlugin('x').profiles[0])).toEqual([]);
      expect(await catalog.list()).toMatchObject([{ pluginId: 'acme-stamp', version: '1.0.0', alive: true, replicas: [{ instanceId: a.instanceId }] }]);

      // Ids are unique across the platform: a built-in step id and another plugin's step id are both refused.
      const squatter = definePlugin({
        id: 'squatter',
        version: '0.1.0',
        steps: [defineStep({ id: 'acme.stamp', runsOn: 'control-plane', input: z.object({}), run: async () => null })],
      });
      expect(await refusalOf(runPlugin(squatter, { config, env: pluginEnv }))).toBe('ALREADY_EXISTS');
      const shadow = definePlugin({
        id: 'shadow',
        version: '0.1.0',
        steps: [defineStep({ id: 'power.set', runsOn: 'site', input: z.object({}), run: async () => null })],
      });
      expect(await refusalOf(runPlugin(shadow, { config, env: pluginEnv }))).toBe('ALREADY_EXISTS');

      // A deploy with the plugin's profile: the plugin's steps run in the plugin, the second sees the first's output.
      const deploy = async (nodeId: string) => {
        const result = await env.bus.execute({ name: 'metal.deploy', payload: { nodeId, profile: 'acme-stamped', role: 'worker' }, actor: 'test' });
        return (result.events[0]!.data as { workflowId: string }).workflowId;
      };
      const n1Workflow = await deploy('n1');
      await env.waitForNode('n1', (s) => s.exists && s.state === 'deployed');
      const wf = (await env.bus.repository.load(workflowAggregate, n1Workflow)).state;
      if (!wf.exists) throw new Error('no workflow');
      expect(wf.steps.map((s) => [s.id, s.plugin])).toEqual([
        ['acme.stamp', 'acme-stamp'],
        ['acme.check', 'acme-stamp'],
      ]);
      const stampOutput = wf.progress[0]!.output as { stamp: string; url: string };
      expect(wf.progress[1]!.output).toEqual({ seen: stampOutput.stamp });
      expect(ranBy.filter((r) => r.key.startsWith(wf.workflowId)).map((r) => r.replica)).toEqual(['a', 'a']);

      // The plugin dies: its work waits. A new replica picks it up where it was.
      await a.stop();
      expect((await catalog.list())[0]).toMatchObject({ alive: false, replicas: [] });
      await deploy('n2');
      await sleep(2_000);
      expect(await env.nodeState('n2')).toMatchObject({ state: 'deploying' });
      await start('b');
      await env.waitForNode('n2', (s) => s.exists && s.state === 'deployed');

      // Two replicas share the durable: the one holding an attempt dies mid-step, the other finishes that attempt.
      await start('c');
      expect((await catalog.list())[0]!.replicas).toHaveLength(2);
      let release!: () => void;
      holdCheck = new Promise((resolve) => (release = resolve));
      const n3Workflow = await deploy('n3');
      await expect.poll(() => ranBy.some((r) => r.step === 'acme.check' && r.key.startsWith(n3Workflow)), { timeout: 20_000 }).toBe(true);
      const holder = ranBy.find((r) => r.step === 'acme.check' && r.key.startsWith(n3Workflow))!.replica;
      const survivor = holder === 'b' ? 'c' : 'b';
      await replicas[holder === 'b' ? 1 : 2]!.stop();
      release();
      holdCheck = null;
      await env.waitForNode('n3', (s) => s.exists && s.state === 'deployed', 30_000);
      const checks = ranBy.filter((r) => r.step === 'acme.check' && r.key.startsWith(n3Workflow));
      // Same attempt on both replicas (the dead one never recorded an outcome), finished by the survivor.
      expect(new Set(checks.map((c) => c.key))).toEqual(new Set([`${n3Workflow}-s1-a1`]));
      expect(checks.at(-1)!.replica).toBe(survivor);
      expect(replicaName).toBe('c');
    } finally {
      for (const r of replicas) await r.stop().catch(() => undefined);
    }
  });
});
