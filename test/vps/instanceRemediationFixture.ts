import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
// The plugin side is written as an outside package would: only the public entry.
import { definePlugin, defineProfile, defineStep, TerminalError, type StepInstance } from 'better-compute/sdk';
import { runPlugin } from 'better-compute/sdk/worker';
import type { InstanceState } from '../../schemas/vps/instanceState.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { instancePayload, provisionMetalPool, quotaOf } from './vpsPayloads.ts';

/** What the plugin's steps saw, and a gate that holds `probe.instance` while a test needs the remediation in flight. */
export const seen: StepInstance[] = [];
export const gate: { hold: Promise<void> | null } = { hold: null };

const probe = defineStep({
  id: 'probe.instance',
  runsOn: 'control-plane',
  input: z.object({}),
  output: z.object({ instanceId: z.string() }),
  run: async (ctx) => {
    seen.push(ctx.instance!);
    if (gate.hold) await gate.hold;
    return { instanceId: ctx.instance!.instanceId };
  },
});
const broken = defineStep({
  id: 'probe.broken',
  runsOn: 'control-plane',
  input: z.object({}),
  run: async (ctx) => {
    throw new TerminalError('AGENT_FAILED', `the console of ${ctx.instance!.instanceId} does not answer`);
  },
});
/** Reads the node: on an instance the step fails with UNSUPPORTED. */
const nodeReader = defineStep({ id: 'probe.node', runsOn: 'control-plane', input: z.object({}), run: async (ctx) => ({ node: ctx.node.nodeId }) });
const profile = (id: string, step: string) =>
  defineProfile({ id, version: 1, target: 'metal', role: 'inspect', steps: [{ id: step, runsOn: 'control-plane', retry: { maxAttempts: 1 } }] });

export const instanceProbePlugin = definePlugin({
  id: 'instance-probe',
  version: '1.0.0',
  steps: [probe, broken, nodeReader],
  profiles: [profile('instance-probe', 'probe.instance'), profile('instance-broken', 'probe.broken'), profile('instance-node', 'probe.node')],
});

/** The engine fixture, the probe plugin running in-process, a metal pool offered to tenants `t-a` and `t-b`. */
export async function startRemediationEngine() {
  const env = await startEngine();
  const config = loadConfig({}, { natsUrl: env.nats.url, natsAuth: 'none', dataDir: env.dataDir, logLevel: 'silent' });
  const plugin = await runPlugin(instanceProbePlugin, { config, env: { BC_WORK_ACK_WAIT_MS: '1500' } });
  await provisionMetalPool(env.bus, { 't-a': quotaOf(4, 8, 32_768, 400), 't-b': quotaOf(4, 8, 32_768, 400) });
  const run = (name: string, payload: unknown, actor = 'test') => env.bus.execute({ name, payload, actor });
  const instanceState = async (instanceId: string) => (await env.bus.repository.load(instanceAggregate, instanceId)).state;
  const disposeEngine = env[Symbol.asyncDispose].bind(env);
  return Object.assign(env, {
    run,
    instanceState,
    /** An instance of `tenantId` the reconciler saw reach `observed` (recorded as the reconciler would). */
    async instanceAt(tenantId: string, instanceId: string, observed: 'running' | 'stopped' | 'provisioning' = 'running') {
      await run('vps.createInstance', instancePayload(tenantId, instanceId));
      if (observed === 'stopped') await run('vps.stopInstance', { tenantId, instanceId });
      await run('vps.recordInstanceObserved', { tenantId, instanceId, observed, providerInstanceId: `hw-${instanceId}`, addresses: ['10.0.0.7'] }, 'engine');
    },
    /** Polls the instance aggregate until `predicate` holds. */
    async waitForInstance(instanceId: string, predicate: (s: InstanceState) => boolean, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = await instanceState(instanceId);
        if (predicate(s)) return s;
        if (Date.now() > deadline) throw new Error(`instance ${instanceId} did not reach the expected state; last: ${JSON.stringify(s)}`);
        await sleep(50);
      }
    },
    async [Symbol.asyncDispose]() {
      await plugin.stop();
      await disposeEngine();
    },
  });
}
