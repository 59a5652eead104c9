import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { readPrefix } from '../support/diskFile.ts';
import { startImageServer } from '../support/imageServer.ts';

describe('the boot path during a short outage', () => {
  it('a machine that PXE-boots while join is down is asked to retry (503) and deploys once join is back', { timeout: 120_000 }, async () => {
    await using engine = await startEngine();
    await using image = await startImageServer();
    const { nc, store, bus, log } = engine;
    const joins = startJoinService(nc, store, log);
    let bootTokens = startBootTokenService(nc, store, log);
    const site = await startSimulatedSite(
      nc,
      {
        siteId: 'bo',
        machines: 1,
        bmcPortBase: 0,
        dataDir: join(engine.dataDir, 'sim', 'bo'),
        diskSizeBytes: 4 << 20,
        bmcDelayMs: 10,
        join: {},
        inProcess: (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' }),
      },
      log,
    );
    const nodeId = 'bo-m001';
    const machine = site.machines[0]!;
    try {
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
      await bootTokens.stop();
      await bus.execute({
        name: 'metal.deploy',
        payload: { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker' },
        commandId: 'deploy-bo-m001',
        actor: 'test',
      });
      // The machine boots, and its script cannot be minted: the site answers 503 and iPXE waits to ask again.
      await expect.poll(() => machine.console.some((line) => line.includes(': 503, retrying after')), { timeout: 30_000 }).toBe(true);
      await sleep(4_000);
      expect(machine.bootScripts).toEqual([]);
      expect(machine.runState).not.toBe('bootFailed');

      bootTokens = startBootTokenService(nc, store, log);
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'deployed', 90_000);
      expect(machine.bootScripts).toHaveLength(1);
      expect(machine.console.filter((line) => line.includes(': 503')).length).toBeGreaterThanOrEqual(1);
      expect(readPrefix(machine.disks[0]!, image.image.length).equals(image.image)).toBe(true);
    } finally {
      await site.stop();
      await bootTokens.stop();
      await joins.stop();
    }
  });
});
