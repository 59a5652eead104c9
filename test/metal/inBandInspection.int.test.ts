import { closeSync, openSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { getNode } from '../../projections/nodes/queries.ts';
import { startEngine } from './engineFixture.ts';

const SIZE = 16 << 20;

const sparseDisk = (path: string, size: number) => {
  const fd = openSync(path, 'w');
  ftruncateSync(fd, size);
  closeSync(fd);
  return path;
};

describe('in-band inspection on the simulated site', () => {
  it(
    'boots the ramdisk at enrolment and at metal.inspect, records what it saw from inside next to the BMC inventory, and names a disk the BMC does not report',
    { timeout: 240_000 },
    async () => {
      await using engine = await startEngine();
      const dataDir = join(engine.dataDir, 'sim');
      const extra = [sparseDisk(join(engine.dataDir, 'm1-a.img'), SIZE), sparseDisk(join(engine.dataDir, 'm1-b.img'), 2 * SIZE)];
      // Machine 1 (DMTF tower) has a second disk its BMC does not list; machine 2 (HPE iLO) is as its BMC says. Both
      // are enrolled to be inspected in band from the start.
      const site = await startSimulatedSite(
        engine.nc,
        {
          siteId: 'dc1',
          machines: 2,
          bmcPortBase: 0,
          dataDir,
          bmcDelayMs: 10,
          inspectInBand: true,
          machineDisks: (i) => (i === 0 ? { disks: extra, bmcLists: 1 } : undefined),
        },
        engine.log,
      );
      try {
        const [m1, m2] = ['dc1-m001', 'dc1-m002'];
        const inspected = async (nodeId: string) => {
          const s = await engine.waitForNode(nodeId, (n) => n.exists && n.state === 'ready' && n.inventoryFindings != null, 120_000);
          if (!s.exists) throw new Error('gone');
          return s;
        };

        const first = await inspected(m1);
        expect(first.inventory?.disks.map((d) => d.serial)).toEqual(['SIM-DC1-M001-0']);
        expect(first.inBandInventory?.disks.map((d) => [d.serial, d.sizeBytes])).toEqual([
          ['SIM-DC1-M001-0', SIZE],
          ['SIM-DC1-M001-1', 2 * SIZE],
        ]);
        expect(first.inBandInventory?.nics.map((n) => n.mac)).toContain('52:54:00:00:00:00');
        expect(first.inventoryFindings).toEqual([{ code: 'DISK_NOT_REPORTED_BY_BMC', subject: 'SIM-DC1-M001-1', detail: expect.any(String) }]);

        // The HPE tree's BMC lists no drives (they are behind OEM SmartStorage): NICs, CPUs and memory still agree.
        const second = await inspected(m2);
        expect(second.inBandInventory?.disks).toHaveLength(1);
        expect(second.inBandInventory?.nics.map((n) => n.mac).sort()).toEqual(second.inventory?.nics.map((n) => n.mac).sort());
        expect(second.inventoryFindings).toEqual([]);

        // metal.inspect looks again; the machine now has nothing the BMC does not know of, and the findings follow.
        const again = await engine.bus.execute({ name: 'metal.inspect', payload: { nodeId: m2 }, actor: 'operator' });
        const workflowId = (again.events[0]!.data as { workflowId: string }).workflowId;
        const reinspected = await engine.waitForNode(m2, (n) => n.exists && n.state === 'ready' && n.current === null && n.inventoryFindings != null, 120_000);
        expect(reinspected.exists && reinspected.inventoryFindings).toEqual([]);
        const workflows = engine.readers.get('workflows')!;
        await workflows.waitFor(await engine.store.streamLastSequence(), 10_000);
        const probe = workflows.db().prepare(`SELECT state FROM workflow_steps WHERE workflow_id = ? AND step_id = 'hardware.probe'`).get(workflowId) as {
          state: string;
        };
        expect(probe.state).toBe('succeeded');
        // The inspection leaves the machine off, out of the ramdisk.
        expect(site.machines.map((m) => m.bmc.state.powerState)).toEqual(['Off', 'Off']);

        const last = await engine.store.streamLastSequence();
        const nodes = engine.readers.get('nodes')!;
        await nodes.waitFor(last, 10_000);
        const view = getNode(nodes.db(), m1)!;
        expect(view.inventoryFindings?.map((f) => f.code)).toEqual(['DISK_NOT_REPORTED_BY_BMC']);
        expect(view.inBandInventory?.disks).toHaveLength(2);
      } finally {
        await site.stop();
      }
    },
  );
});
