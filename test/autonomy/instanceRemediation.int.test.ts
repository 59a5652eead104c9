import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import type { Signal } from '../../schemas/autonomy/signals.ts';
import { defineBinding, definePlugin, defineSensor, remediateWith } from '../../plugins/sdk/index.ts';
import { decisionAggregate } from '../../services/autonomy/decision/decision.ts';
import { loadAutonomyConfig } from '../../services/stack/autonomy/config.ts';
import { autonomyExtensionsOf, createAutonomyEngine } from '../../services/stack/autonomy/wiring.ts';
import { startRemediationEngine } from '../vps/instanceRemediationFixture.ts';
import { allOk } from './autonomyFixture.ts';
import { publishPassOn, waitForEngine } from './passes.ts';

/** A plugin whose binding's key is an instance: `remediateWith` resolves it to `vps.remediateInstance`. */
const instanceWatch = definePlugin({
  id: 'instance-watch',
  version: '1.0.0',
  // The test publishes the passes itself; the sensor only declares what it emits.
  sensors: [defineSensor({ name: 'instance-watch', emits: ['instance-sluggish'], assess: () => ({ assessed: 0, signals: [] }) })],
  bindings: [defineBinding({ signal: 'instance-sluggish', category: 'instance-recheck', plan: remediateWith('instance-probe') })],
  policies: [
    {
      category: 'instance-recheck',
      owner: 'instance-watch',
      disposition: 'auto',
      kind: 'advisory',
      advancement: false,
      approvalTimeoutMs: 3_600_000,
      description: 'A sluggish instance is probed (instance-probe, as vps.remediateInstance)',
    },
  ],
});

const sluggish: Signal = {
  kind: 'instance-sluggish',
  sensor: 'instance-watch',
  key: 'web',
  target: { type: 'instance', id: 'web' },
  siteId: null,
  facts: {},
  detail: 'console answers slowly',
  controlPlane: false,
};
const reports = [...allOk, { sensor: 'instance-watch', ok: true as const, assessed: 1, signals: 1 }];

describe('autonomy remediates VPS instances', () => {
  it('a decision on an instance starts its remediation workflow exactly once, however often the pass arrives', { timeout: 120_000 }, async () => {
    await using env = await startRemediationEngine();
    await env.instanceAt('t-a', 'web', 'running');
    const config = loadAutonomyConfig({}, { settleMs: 60_000 });
    const extensions = autonomyExtensionsOf([instanceWatch]);
    // Two replicas on the shared durable, the same pass delivered twice and a later pass with the same signal.
    const engines = [0, 1].map(() => createAutonomyEngine(env.nc, env.store, config, env.log, {}, extensions));
    for (const e of engines) await e.start();
    try {
      const marker = await publishPassOn(env.nc, [sluggish], reports);
      await publishPassOn(env.nc, [sluggish], reports, marker.passId);
      await waitForEngine(env.nc);
      await publishPassOn(env.nc, [sluggish], reports);
      await waitForEngine(env.nc);
    } finally {
      for (const e of engines) await e.stop();
    }

    const decision = (await env.bus.repository.load(decisionAggregate, decisionIdOf('instance-recheck', 'web'))).state;
    expect(decision).toMatchObject({
      status: 'running',
      plan: { action: 'vps.remediateInstance', target: { type: 'instance', id: 'web' }, params: { profile: 'instance-probe' } },
    });
    const web = await env.waitForInstance('web', (s) => s.remediation === null && s.desired === 'running' && s.attention === null);
    expect(web.observed).toBe('running');

    const requested: string[] = [];
    for await (const b of env.store.readAfter('bc.evt.vps.instance.web', 0))
      for (const e of b.batch.events) if (e.type === 'InstanceRemediationRequested') requested.push((e.data as { workflowId: string }).workflowId);
    expect(requested).toHaveLength(1);
    const started = [];
    for await (const b of env.store.readAfter(`bc.evt.metal.workflow.${requested[0]}`, 0))
      started.push(...b.batch.events.filter((e) => e.type === 'WorkflowStarted'));
    expect(started).toHaveLength(1);
    // The approved plan travelled with the workflow, and `workflow.start` checked it against what it ran.
    expect(started[0]!.data).toMatchObject({ operation: 'remediate', nodeId: 'web', instance: { instanceId: 'web', tenantId: 't-a' } });
  });
});
