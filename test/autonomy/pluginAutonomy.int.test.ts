import { jetstream } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import type { BmcObservation } from '../../schemas/autonomy/snapshot.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { definePlugin, defineBinding, remediateWith } from '../../plugins/sdk/index.ts';
import { decisionAggregate } from '../../services/autonomy/decision/decision.ts';
import { loadPluginModules } from '../../services/plugins/pluginModules.ts';
import { loadAutonomyConfig } from '../../services/stack/autonomy/config.ts';
import { autonomyExtensionsOf, createAutonomyEngine, createFleetSensors } from '../../services/stack/autonomy/wiring.ts';
import { enrollPayload, startEngine } from '../metal/engineFixture.ts';
import { startFakeAgent } from '../metal/fakeAgent.ts';
import { waitForEngine } from './passes.ts';
import examplePlugin, { flakyBmcSensor } from './plugins/bmcWatch.ts';

const modulePath = new URL('./plugins/bmcWatch.ts', import.meta.url).pathname;

describe('plugins join fleet autonomy through the SDK', () => {
  it('a plugin sensor and binding, loaded from its module, remediate a node with a profile and the node returns to ready', async () => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    const extensions = autonomyExtensionsOf(await loadPluginModules([modulePath]));
    expect(extensions.sensors.map((s) => s.name)).toEqual(['bmc-watch']);
    const config = loadAutonomyConfig({}, { settleMs: 0 });
    const sources = { nodes: env.readers.get('nodes')!, workflows: env.readers.get('workflows')!, vps: env.readers.get('vps')! };
    const sensors = createFleetSensors(env.nc, sources, config, env.log, extensions);
    const engine = createAutonomyEngine(env.nc, env.store, config, env.log, {}, extensions);
    await engine.start();
    try {
      await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 't' });
      await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 't' });
      await env.waitForNode('n1', (s) => s.exists && s.state === 'ready');
      const observation: BmcObservation = { nodeId: 'n1', siteId: 'dc1', consecutiveFailures: 1, lastError: 'timeout', at: new Date().toISOString() };
      await jetstream(env.nc).publish(Subjects.bmcObservation('n1'), JSON.stringify(observation));
      await env.readers.get('nodes')!.waitFor(await env.store.streamLastSequence(), 5_000);

      const marker = await sensors.pass();
      expect(marker.sensors.find((s) => s.sensor === 'bmc-watch')).toMatchObject({ ok: true, signals: 1 });
      await waitForEngine(env.nc);
      const id = decisionIdOf('bmc-recheck', 'n1');
      expect((await env.bus.repository.load(decisionAggregate, id)).state).toMatchObject({
        status: 'running',
        plan: { action: 'metal.remediate', target: { type: 'node', id: 'n1' }, params: { profile: 'bmc-check' } },
      });
      // The remediation ran as a workflow of the plan approved (by policy) and the node is ready again.
      await env.waitForNode('n1', (s) => s.exists && s.state === 'ready' && s.current === null && s.failed === null);
      const last = await env.store.streamLastSequence();
      const workflows = env.readers.get('workflows')!;
      await workflows.waitFor(last, 5_000);
      expect(workflows.db().prepare(`SELECT operation, state, profile_id FROM workflows WHERE node_id = 'n1' ORDER BY started_at`).all()).toEqual([
        { operation: 'inspect', state: 'completed', profile_id: 'inspect' },
        { operation: 'remediate', state: 'completed', profile_id: 'bmc-check' },
      ]);
    } finally {
      await engine.stop();
    }
  });

  it('the start-up check refuses a plugin binding whose signal no sensor emits, or whose category nobody declares', async () => {
    await using env = await startEngine();
    const config = loadAutonomyConfig({}, {});
    const unfed = definePlugin({
      id: 'unfed',
      version: '1.0.0',
      bindings: [defineBinding({ signal: 'disk-smart', category: 'retry', plan: remediateWith('bmc-check') })],
    });
    const undeclared = definePlugin({
      id: 'undeclared',
      version: '1.0.0',
      sensors: [flakyBmcSensor],
      bindings: [defineBinding({ signal: 'bmc-flaky', category: 'no-such-category', plan: remediateWith('bmc-check') })],
    });
    expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, {}, autonomyExtensionsOf([unfed]))).toThrowError(
      expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('"disk-smart": no sensor emits it') }) as never,
    );
    expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, {}, autonomyExtensionsOf([undeclared]))).toThrowError(
      expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('category "no-such-category" is not declared') }) as never,
    );
    const clash = definePlugin({ id: 'clash', version: '1.0.0', sensors: [{ ...flakyBmcSensor, name: 'bmc' }] });
    expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, {}, autonomyExtensionsOf([clash]))).toThrowError(
      expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('sensor "bmc" is defined twice') }) as never,
    );
    // The example plugin is coherent: its category is declared by the plugin itself.
    expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, {}, autonomyExtensionsOf([examplePlugin]))).not.toThrow();
  });
});
