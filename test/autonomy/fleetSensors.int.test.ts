import { jetstream } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import type { BmcObservation } from '../../schemas/autonomy/snapshot.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { decisionAggregate } from '../../services/autonomy/decision/decision.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { loadAutonomyConfig } from '../../services/stack/autonomy/config.ts';
import { createAutonomyEngine, createFleetSensors } from '../../services/stack/autonomy/wiring.ts';
import { enrollPayload } from '../metal/engineFixture.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { waitForEngine } from './passes.ts';

describe('fleet-sensors → autonomy-engine, the BMC lane end to end', () => {
  it('maintenance follows the monitor’s observations with its hysteresis, clears when the BMC answers, and a steady fleet appends no events', async () => {
    await using env = await startBackbone();
    const responder = serveCommands(env.nc, env.bus, env.log);
    const config = loadAutonomyConfig({}, { settleMs: 0, controlPlaneNodes: ['cp1'] });
    const sensors = createFleetSensors(
      env.nc,
      { nodes: env.readers.get('nodes')!, workflows: env.readers.get('workflows')!, vps: env.readers.get('vps')! },
      config,
      env.log,
    );
    const engine = createAutonomyEngine(env.nc, env.store, config, env.log);
    await engine.start();
    const js = jetstream(env.nc);
    const observe = (nodeId: string, consecutiveFailures: number) =>
      js.publish(
        Subjects.bmcObservation(nodeId),
        JSON.stringify({
          nodeId,
          siteId: 'dc1',
          consecutiveFailures,
          lastError: consecutiveFailures ? 'ECONNREFUSED' : null,
          at: new Date().toISOString(),
        } satisfies BmcObservation),
      );
    const pass = async () => {
      await env.readers.get('nodes')!.waitFor(await env.store.streamLastSequence(), 5_000);
      const marker = await sensors.pass();
      await waitForEngine(env.nc);
      return marker;
    };
    try {
      await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 't' });
      for (const n of ['n1', 'n2', 'cp1']) await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(n), actor: 't' });
      await env.bus.execute({ name: 'metal.setMaintenance', payload: { nodeId: 'n2', on: true, reason: 'operator' }, actor: 't' });

      // Two failed reads: below the hysteresis threshold, nothing happens.
      await observe('n1', 2);
      const first = await pass();
      expect(first.sensors.every((s) => s.ok)).toBe(true);
      expect(first.signalCount).toBe(0);
      expect((await env.bus.repository.load(nodeAggregate, 'n1')).state).toMatchObject({ maintenance: false });

      await observe('n1', 3);
      await observe('n2', 5);
      await observe('cp1', 9);
      expect((await pass()).signalCount).toBe(3);
      expect((await env.bus.repository.load(nodeAggregate, 'n1')).state).toMatchObject({ maintenance: true, maintenanceSource: 'bmc' });
      // The control plane's own node: refused, no decision.
      expect((await env.bus.repository.load(decisionAggregate, decisionIdOf('maintenance', 'cp1'))).state).toEqual({ exists: false });

      // Steady: the same observations, passes append nothing to the log.
      const before = await env.store.streamLastSequence();
      await pass();
      await pass();
      expect(await env.store.streamLastSequence()).toBe(before);

      await observe('n1', 0);
      await observe('n2', 0);
      await pass();
      expect((await env.bus.repository.load(nodeAggregate, 'n1')).state).toMatchObject({ maintenance: false });
      expect((await env.bus.repository.load(nodeAggregate, 'n2')).state).toMatchObject({ maintenance: true, maintenanceSource: 'operator' });
      expect((await env.bus.repository.load(decisionAggregate, decisionIdOf('maintenance', 'n1'))).state).toMatchObject({
        status: 'closed',
        closedReason: 'outcome',
      });
    } finally {
      await engine.stop();
      await sensors.stop();
      responder.unsubscribe();
    }
  });

  it('refuses to start with a binding whose signal no sensor emits or whose category is undeclared (acceptance 10)', async () => {
    await using env = await startBackbone({ projectors: false });
    const config = loadAutonomyConfig({});
    const orphan = {
      signal: 'disk-smart',
      category: 'retry',
      plan: () => ({ action: 'none' as const, target: { type: 'node' as const, id: 'x' }, params: {} }),
    };
    expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, { bindings: [orphan] })).toThrow(/no sensor emits it/);
    const undeclared = { ...orphan, signal: 'node-failed', category: 'reimage' };
    expect(() => createAutonomyEngine(env.nc, env.store, config, env.log, { bindings: [undeclared] })).toThrow(/category "reimage" is not declared/);
  });
});
