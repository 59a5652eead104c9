import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { startImageServer } from '../support/imageServer.ts';
import { tempDir } from '../support/natsServer.ts';
import { attachLoopDevice, readAll, type LoopDevice } from '../support/loopDevice.ts';
import { startEngine } from './engineFixture.ts';

const SIZE = 16 << 20;

describe('releases of machines whose disks are real block devices', () => {
  const dir = tempDir('bc-loops-');
  const loops: LoopDevice[] = [];
  afterAll(() => {
    for (const loop of loops) loop.detach();
    dir[Symbol.dispose]();
  });

  it(
    'images and wipes every disk of a machine, attested against its BMC inventory; a wipe that misses a disk fails the release into maintenance',
    { timeout: 180_000 },
    async () => {
      const attach = (name: string) => {
        const loop = attachLoopDevice(dir.path, name, SIZE);
        loops.push(loop);
        return loop;
      };
      // Machine 1: two disks, both seen by its ramdisk. Machine 3: two disks, but its ramdisk has a driver for the
      // first only, while the BMC lists both. (Machine 2 serves the HPE tree, whose BMC lists no drives.)
      const [a, b, c, d] = [attach('m1-a'), attach('m1-b'), attach('m3-a'), attach('m3-b')];
      await using engine = await startEngine();
      await using image = await startImageServer();
      const site = await startSimulatedSite(
        engine.nc,
        {
          siteId: 'dc1',
          machines: 3,
          bmcPortBase: 0,
          dataDir: join(engine.dataDir, 'sim'),
          bmcDelayMs: 10,
          machineDisks: (i) => (i === 0 ? { disks: [a.path, b.path] } : i === 2 ? { disks: [c.path, d.path], ramdiskSees: 1 } : undefined),
        },
        engine.log,
      );
      try {
        const [m1, m3] = ['dc1-m001', 'dc1-m003'];
        const ready = await engine.waitForNode(m1, (s) => s.exists && s.state === 'ready');
        expect(ready.exists && ready.inventory?.disks).toEqual([
          { id: expect.any(String), sizeBytes: SIZE, model: expect.any(String), serial: 'SIM-DC1-M001-0' },
          { id: expect.any(String), sizeBytes: SIZE, model: expect.any(String), serial: 'SIM-DC1-M001-1' },
        ]);
        await engine.waitForNode(m3, (s) => s.exists && s.state === 'ready');

        for (const nodeId of [m1, m3]) {
          const deploy = { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker', sshKeys: ['ssh-ed25519 AAAA test'] };
          await engine.bus.execute({ name: 'metal.deploy', payload: deploy, actor: 'test' });
        }
        for (const nodeId of [m1, m3]) await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'deployed', 90_000);
        // image.write wrote the first disk, a loop device.
        expect(readAll(a.path, image.image.length).equals(image.image)).toBe(true);
        expect(readAll(c.path, image.image.length).equals(image.image)).toBe(true);

        const release = await engine.bus.execute({ name: 'metal.undeploy', payload: { nodeId: m1 }, actor: 'test' });
        await engine.bus.execute({ name: 'metal.undeploy', payload: { nodeId: m3 }, actor: 'test' });
        await engine.waitForNode(m1, (s) => s.exists && s.state === 'ready', 90_000);
        for (const loop of [a, b]) expect(readAll(loop.path, SIZE).equals(Buffer.alloc(SIZE))).toBe(true);

        const last = await engine.store.streamLastSequence();
        const workflows = engine.readers.get('workflows')!;
        await workflows.waitFor(last, 5_000);
        const workflowId = (release.events[0]!.data as { workflowId: string }).workflowId;
        const wipe = workflows.db().prepare(`SELECT output FROM workflow_steps WHERE workflow_id = ? AND step_id = 'disk.wipe'`).get(workflowId) as {
          output: string;
        };
        expect(JSON.parse(wipe.output)).toEqual({
          attested: true,
          agentId: expect.stringMatching(new RegExp(`^ramdisk-${m1}-`)),
          method: 'zero',
          disks: [
            { path: a.path, serial: 'SIM-DC1-M001-0', model: expect.any(String), sizeBytes: SIZE, method: 'zero', verifiedBytes: SIZE },
            { path: b.path, serial: 'SIM-DC1-M001-1', model: expect.any(String), sizeBytes: SIZE, method: 'zero', verifiedBytes: SIZE },
          ],
        });

        const failed = await engine.waitForNode(m3, (s) => s.exists && s.state === 'failed', 90_000);
        expect(failed).toMatchObject({
          maintenance: true,
          maintenanceSource: 'platform',
          failed: {
            operation: 'release',
            failedStep: 'disk.wipe',
            reason: expect.stringContaining('(serial SIM-DC1-M003-1, 16777216 bytes) is not in the wipe result'),
          },
        });
        // The disk the ramdisk could see is clean; the one it could not still holds everything: why a signature alone is not enough.
        expect(readAll(c.path, SIZE).equals(Buffer.alloc(SIZE))).toBe(true);
        expect(readAll(d.path, SIZE).every((byte) => byte === 0xff)).toBe(true);
      } finally {
        await site.stop();
      }
    },
  );
});
