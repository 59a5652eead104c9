import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBmcSimulator } from '../../daemon/simulator/bmc/index.ts';
import { startSiteAgent } from '../../daemon/site/siteAgent.ts';
import { startEngine } from './engineFixture.ts';

const PASSWORD = 'multi-system-Pa55';

/** The MACs and UUID a system of the simulator serves, as its own documents say. */
function identityOf(sim: Awaited<ReturnType<typeof startBmcSimulator>>, systemUri: string) {
  const system = sim.resource(systemUri) as { UUID: string; EthernetInterfaces: { '@odata.id': string } };
  const nics = (sim.resource(system.EthernetInterfaces['@odata.id']) as { Members: { '@odata.id': string }[] }).Members;
  return { uuid: system.UUID.toLowerCase(), macs: nics.map((m) => String((sim.resource(m['@odata.id']) as { MACAddress: string }).MACAddress).toLowerCase()) };
}

describe('inspection of a BMC that serves several systems', () => {
  it('inspects each node as the system its address names, and refuses the wrong MACs and an address naming no system', { timeout: 90_000 }, async () => {
    await using engine = await startEngine();
    const { bus, dataDir } = engine;
    const sim = await startBmcSimulator({ tree: 'hpe-ilo5-dl325', username: 'admin', password: PASSWORD, systems: 3 });
    const credentials = join(dataDir, 'credentials.json');
    writeFileSync(credentials, JSON.stringify({ 'secret:chassis-bmc': { username: 'admin', password: PASSWORD } }));
    const agent = await startSiteAgent(engine.nc, {
      siteId: 'dc1',
      stateDir: join(dataDir, 'site'),
      natsUrl: engine.nats.url,
      credentials: { labFile: credentials },
      redfish: { timeoutMs: 3_000, timing: { pollIntervalMs: 20 } },
      log: engine.log,
    });
    try {
      await agent.registered;
      await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
      const [a, b, c] = sim.systems.map((s) => ({ address: sim.addressOf(s), ...identityOf(sim, s.uri) }));
      expect(new Set([a!.uuid, b!.uuid, c!.uuid]).size).toBe(3);
      const enroll = (nodeId: string, address: string, macs: string[]) =>
        bus.execute({
          name: 'metal.enroll',
          payload: { nodeId, siteId: 'dc1', bmc: { address, credentialsRef: 'secret:chassis-bmc' }, hardwareProfile: 'hpe-ilo5-dl325', macs },
          actor: 'test',
        });
      await enroll('node-a', a!.address, [a!.macs[0]!]);
      await enroll('node-b', b!.address, b!.macs);
      // Enrolled for system B's MAC but pointed at system C: the wrong machine.
      await enroll('node-wrong', c!.address, [b!.macs[0]!]);
      // A chassis address with no system: which one it is cannot be known.
      await enroll('node-vague', sim.url, [a!.macs[0]!]);

      const ready = async (nodeId: string) => engine.waitForNode(nodeId, (s) => s.exists && (s.state === 'ready' || s.state === 'failed'));
      const [nodeA, nodeB, wrong, vague] = await Promise.all(['node-a', 'node-b', 'node-wrong', 'node-vague'].map(ready));
      for (const [node, system] of [
        [nodeA, a],
        [nodeB, b],
      ] as const) {
        expect(node).toMatchObject({ state: 'ready', inventory: { productUuid: system!.uuid } });
        expect(node!.exists && node!.inventory!.nics.map((n) => n.mac)).toEqual(system!.macs);
      }
      expect(wrong).toMatchObject({
        state: 'failed',
        failed: { operation: 'inspect', failedStep: 'inventory.read', reason: expect.stringContaining('INVENTORY_MISMATCH') },
      });
      // The wrong system's inventory was never recorded for the node.
      expect(wrong).toMatchObject({ inventory: null });
      // System A is node-a's: a second node for it is refused at enrolment, before anything touches the machine.
      await expect(enroll('node-again', a!.address, a!.macs)).rejects.toMatchObject({ code: 'NODE_IDENTITY_CONFLICT' });
      expect(vague).toMatchObject({ state: 'failed', failed: { failedStep: 'inventory.read', reason: expect.stringContaining('REDFISH_SYSTEM_AMBIGUOUS') } });
    } finally {
      await agent.stop();
      await sim.close();
    }
  });
});
