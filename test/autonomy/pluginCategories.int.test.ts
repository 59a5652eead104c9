import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import type { SensorReport, Signal } from '../../schemas/autonomy/signals.ts';
import { definePlugin } from '../../plugins/sdk/index.ts';
import { decisionAggregate } from '../../services/autonomy/decision/decision.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { loadAutonomyConfig } from '../../services/stack/autonomy/config.ts';
import { autonomyExtensionsOf, createAutonomyEngine } from '../../services/stack/autonomy/wiring.ts';
import { runPlugin, type RunningPlugin } from '../../services/stack/runPlugin.ts';
import { startApi } from '../support/apiFixture.ts';
import { allOk, signalOf } from './autonomyFixture.ts';
import { publishPassOn, waitForEngine } from './passes.ts';
import examplePlugin from './plugins/bmcWatch.ts';

const category = examplePlugin.policies[0]!;
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (err: { code?: string }) => err.code,
  );
const refusalOf = (started: Promise<RunningPlugin>) =>
  started.then(
    async (p) => (await p.stop(), 'no error'),
    (err: { code?: string }) => err.code,
  );
/** A signal of the example plugin's sensor. */
const flaky = (nodeId: string): Signal => ({ ...signalOf('bmc-unreachable', nodeId), kind: 'bmc-flaky', sensor: 'bmc-watch' });
const reports: SensorReport[] = [...allOk, { sensor: 'bmc-watch', ok: true, assessed: 1, signals: 1 }];

describe("a plugin's intervention categories are steered like built-in ones", () => {
  it('setPolicy and pause accept a registered plugin category and owner, a pause holds only that owner, the policies list names the plugin', async () => {
    await using env = await startApi();
    const responder = serveCommands(env.nc, env.bus, env.log);
    // Another process's bus: it has seen the registry before the plugin registered, and must not keep refusing.
    const otherProcess = new CommandBus(env.store, allCommands, { retries: 5 });
    const operator = { actor: 'token:operator' };
    const setPolicy = (bus: CommandBus, disposition: 'auto' | 'notify' | 'require' | 'block' | null) =>
      bus.execute({ name: 'autonomy.setPolicy', payload: { category: category.category, disposition }, ...operator });
    const pause = (owner: string, paused: boolean) => env.bus.execute({ name: 'autonomy.pause', payload: { owner, paused }, ...operator });
    let plugin: RunningPlugin | undefined;
    const engine = createAutonomyEngine(env.nc, env.store, loadAutonomyConfig({}, { settleMs: 0 }), env.log, {}, autonomyExtensionsOf([examplePlugin]));
    try {
      expect(await codeOf(setPolicy(otherProcess, 'notify'))).toBe('NOT_PERMITTED');
      expect(await codeOf(pause('bmc-watch', true))).toBe('NOT_PERMITTED');

      // The plugin process registers its categories with its steps and profiles.
      plugin = await runPlugin(examplePlugin, { config: env.config });
      expect((await setPolicy(otherProcess, 'notify')).events.map((e) => e.data)).toEqual([{ category: 'bmc-recheck', disposition: 'notify' }]);
      expect((await setPolicy(env.bus, null)).events).toHaveLength(1);
      expect(await codeOf(env.bus.execute({ name: 'autonomy.setPolicy', payload: { category: 'bmc-reboot', disposition: 'auto' }, ...operator }))).toBe(
        'NOT_PERMITTED',
      );
      expect(await codeOf(pause('nobody', true))).toBe('NOT_PERMITTED');

      // Paused: the plugin owner's auto remediation is approved but not started in this pass; the metal lane goes on.
      await pause('bmc-watch', true);
      await engine.start();
      await publishPassOn(env.nc, [flaky('n1'), signalOf('bmc-unreachable', 'n2')], reports);
      await waitForEngine(env.nc);
      const decision = async (id: string) => (await env.bus.repository.load(decisionAggregate, id)).state;
      expect(await decision(decisionIdOf('bmc-recheck', 'n1'))).toMatchObject({ status: 'approved', policy: { owner: 'bmc-watch' } });
      expect(await decision(decisionIdOf('maintenance', 'n2'))).toMatchObject({ status: 'running' });
      await pause('bmc-watch', false);
      await publishPassOn(env.nc, [flaky('n1'), signalOf('bmc-unreachable', 'n2')], reports);
      await waitForEngine(env.nc);
      expect(await decision(decisionIdOf('bmc-recheck', 'n1'))).toMatchObject({
        status: 'running',
        plan: { action: 'metal.remediate', params: { profile: 'bmc-check' } },
      });

      await setPolicy(env.bus, 'require');
      await pause('bmc-watch', true);
      await env.readers.get('autonomy')!.waitFor(await env.store.streamLastSequence(), 5_000);
      const policies = (await env.app.inject({ url: '/v1/autonomy/policies' })).json().items as { category: string }[];
      expect(policies.find((p) => p.category === 'bmc-recheck')).toEqual({
        ...category,
        pluginId: 'bmc-watch',
        effectiveDisposition: 'require',
        overridden: true,
        paused: true,
      });
      expect(policies.find((p) => p.category === 'retry')).toMatchObject({ owner: 'metal', pluginId: null, paused: false });
      const refused = await env.app.inject({ method: 'POST', url: '/v1/commands/autonomy.pause', payload: { owner: 'nobody', paused: true } });
      expect([refused.statusCode, refused.json().code]).toEqual([403, 'NOT_PERMITTED']);
    } finally {
      await engine.stop();
      await plugin?.stop();
      responder.unsubscribe();
    }
  });

  it('a category declared a second time is refused at start-up: by the registry when a plugin registers, by the engine when it loads both', async () => {
    await using env = await startApi();
    const responder = serveCommands(env.nc, env.bus, env.log);
    try {
      const first = await runPlugin(examplePlugin, { config: env.config });
      await first.stop();
      const squatter = definePlugin({ id: 'squatter', version: '1.0.0', policies: [{ ...category, owner: 'squatter' }] });
      expect(await refusalOf(runPlugin(squatter, { config: env.config }))).toBe('ALREADY_EXISTS');
      const builtin = definePlugin({ id: 'shadow', version: '1.0.0', policies: [{ ...category, category: 'retry' }] });
      expect(await refusalOf(runPlugin(builtin, { config: env.config }))).toBe('ALREADY_EXISTS');
      // The same plugin again (a restart, another replica) registers nothing new and starts.
      const before = await env.store.streamLastSequence();
      await (await runPlugin(examplePlugin, { config: env.config })).stop();
      expect(await env.store.streamLastSequence()).toBe(before);

      const config = loadAutonomyConfig({}, {});
      expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, {}, autonomyExtensionsOf([examplePlugin, squatter]))).toThrowError(
        expect.objectContaining({ code: 'ALREADY_EXISTS', message: expect.stringContaining('bmc-recheck') }) as never,
      );
      // A binding to a plugin category still passes the start-up check once its plugin declares it, and only then.
      expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, {}, autonomyExtensionsOf([examplePlugin]))).not.toThrow();
      const undeclared = { ...examplePlugin, policies: [] };
      expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, {}, autonomyExtensionsOf([undeclared]))).toThrowError(
        expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('category "bmc-recheck" is not declared') }) as never,
      );
    } finally {
      responder.unsubscribe();
    }
  });
});
