import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getNode } from '../../projections/nodes/queries.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { BmcMonitor } from '../../services/processes/bmcMonitor/bmcMonitor.ts';
import { loadBmcMonitorConfig } from '../../services/processes/bmcMonitor/bmcMonitorConfig.ts';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { loadAutonomyConfig } from '../../services/stack/autonomy/config.ts';
import { createAutonomyEngine, createFleetSensors } from '../../services/stack/autonomy/wiring.ts';

// `direct`: the monitor acts itself. `sensor`: it publishes observations and the autonomy engine's maintenance lane
// acts on them through fleet-sensors, with the same hysteresis: the same story must come out of the log.
describe.each(['direct', 'sensor'] as const)('bmc-monitor (%s): automatic maintenance on BMC loss', (mode) => {
  it('puts a node whose BMC stops answering into maintenance and clears it on recovery, leaving operator maintenance alone', { timeout: 60_000 }, async () => {
    await using env = await startBackbone();
    const responder = serveCommands(env.nc, env.bus, env.log);
    // The site agent registers its key on its own registration subject, which the join process answers.
    const registrations = startRegistrationService(env.nc, env.store, env.log);
    const site = await startSimulatedSite(env.nc, { siteId: 'dc1', machines: 3, bmcPortBase: 0, dataDir: join(env.dataDir, 'sim'), bmcDelayMs: 0 }, env.log);
    const monitor = new BmcMonitor(
      env.nc,
      env.store,
      env.readers.get('nodes')!,
      loadBmcMonitorConfig({}, { intervalMs: 150, failuresBeforeMaintenance: 2, probeTimeoutMs: 5_000, mode }),
      env.log,
    );
    const autonomyConfig = loadAutonomyConfig({}, { tickMs: 150, bmcFailuresBeforeSignal: 2, settleMs: 0 });
    const sensors = mode === 'sensor' ? createFleetSensors(env.nc, { nodes: env.readers.get('nodes')! }, autonomyConfig, env.log) : undefined;
    const engine = mode === 'sensor' ? createAutonomyEngine(env.nc, env.store, autonomyConfig, env.log) : undefined;
    const node = (id: string) => getNode(env.readers.get('nodes')!.db(), id);
    const [lost, operatorHeld, healthy] = ['dc1-m001', 'dc1-m002', 'dc1-m003'];
    try {
      await expect.poll(() => node(healthy)?.state, { timeout: 10_000 }).toBe('enrolled');
      await env.bus.execute({ name: 'metal.setMaintenance', payload: { nodeId: operatorHeld, on: true, reason: 'fan swap' }, actor: 'operator:test' });
      await monitor.start();
      await engine?.start();
      sensors?.start();

      site.machines[0]!.bmc.setReachable(false);
      site.machines[1]!.bmc.setReachable(false);
      await expect.poll(() => node(lost)?.maintenanceSource, { timeout: 20_000 }).toBe('bmc');
      expect(node(lost)).toMatchObject({
        maintenance: true,
        maintenanceReason: expect.stringMatching(/^BMC unreachable: (\d+ failed BMC reads in a row: )?REDFISH_/),
      });
      expect(node(operatorHeld)).toMatchObject({ maintenance: true, maintenanceReason: 'fan swap', maintenanceSource: 'operator' });
      expect(node(healthy)).toMatchObject({ maintenance: false, maintenanceSource: null });

      site.machines[0]!.bmc.setReachable(true);
      site.machines[1]!.bmc.setReachable(true);
      await expect.poll(() => node(lost)?.maintenance, { timeout: 20_000 }).toBe(false);
      // One more round with every BMC answering: the operator's flag is still theirs.
      const probesBefore = site.machines[1]!.bmc.requestLog.length;
      await expect.poll(() => site.machines[1]!.bmc.requestLog.length, { timeout: 10_000 }).toBeGreaterThan(probesBefore);
      expect(node(operatorHeld)).toMatchObject({ maintenance: true, maintenanceReason: 'fan swap', maintenanceSource: 'operator' });

      // The story is in the log: one automatic set and one automatic clear, both with source bmc.
      const history = [];
      for await (const b of env.store.readAfter(`bc.evt.metal.node.${lost}`, 0)) history.push(...b.batch.events);
      expect(
        history.filter((e) => e.type === 'NodeMaintenanceSet').map((e) => [(e.data as { on: boolean }).on, (e.data as { source: string }).source]),
      ).toEqual([
        [true, 'bmc'],
        [false, 'bmc'],
      ]);
    } finally {
      await monitor.stop();
      await sensors?.stop();
      await engine?.stop();
      await site.stop();
      responder.unsubscribe();
      await registrations.stop();
    }
  });
});
