import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { Streams } from '../../schemas/subjects.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { readPrefix } from '../support/diskFile.ts';
import { startImageServer } from '../support/imageServer.ts';
import { streamMessages } from '../support/plaintextScan.ts';

/**
 * Issue 31, finding 11: a boot lost at the reset was noticed only after `wait.agentJoined`'s 600 s, and never retried.
 * Now no script fetch within the boot budget is `BOOT_LOST` and the workflow resets the machine again.
 */
describe('a ramdisk boot lost at the reset', () => {
  it('is noticed within the boot budget and retried with a new reset and ticket, and the deploy completes', { timeout: 180_000 }, async () => {
    await using engine = await startEngine({ ramdiskBootBudgetMs: 3_000 });
    await using image = await startImageServer();
    const { nc, store, bus, log } = engine;
    const joins = startJoinService(nc, store, log);
    const bootTokens = startBootTokenService(nc, store, log);
    const site = await startSimulatedSite(
      nc,
      {
        siteId: 'bl',
        machines: 1,
        bmcPortBase: 0,
        dataDir: join(engine.dataDir, 'sim', 'bl'),
        diskSizeBytes: 4 << 20,
        bmcDelayMs: 10,
        bootBudgetMs: 3_000,
        lostBoots: 1,
        join: {},
        inProcess: (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' }),
      },
      log,
    );
    const nodeId = 'bl-m001';
    const machine = site.machines[0]!;
    try {
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
      const started = Date.now();
      await bus.execute({
        name: 'metal.deploy',
        payload: { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker' },
        commandId: 'deploy-bl-m001',
        actor: 'test',
      });
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'deployed', 120_000);
      // Far sooner than the 600 s of the old single wait: the lost boot cost one budget, not the step's timeout.
      expect(Date.now() - started).toBeLessThan(120_000);
      expect(machine.console).toContain('firmware hung at power-on: no network boot');
      expect(machine.bootScripts).toHaveLength(1);
      expect(readPrefix(machine.disks[0]!, image.image.length).equals(image.image)).toBe(true);

      const events = await streamMessages(nc, Streams.events.name);
      const body = (text: string) => JSON.parse(text.slice(text.indexOf('\n') + 1)) as { events: { type: string; data: Record<string, unknown> }[] };
      const workflowEvents = events.filter((m) => m.subject.startsWith('bc.evt.metal.workflow.')).flatMap((m) => body(m.text).events);
      const lost = workflowEvents.filter((e) => e.type === 'StepFailed' && e.data.code === 'BOOT_LOST');
      expect(lost).toHaveLength(1);
      expect(lost[0]!.data).toMatchObject({ stepId: 'wait.agentJoined', retryable: true });
      expect(workflowEvents.filter((e) => e.type === 'WorkflowRewound').map((e) => e.data.code)).toEqual(['BOOT_LOST']);
      // Only the second reset's boot was given a token: one ticket per boot, the lost one never fetched.
      const issued = events.filter((m) => m.text.includes('"RamdiskBootTokenIssued"')).flatMap((m) => body(m.text).events);
      expect(issued).toHaveLength(1);
      expect(issued[0]!.data).toMatchObject({ attempt: 2 });
    } finally {
      await site.stop();
      await bootTokens.stop();
      await joins.stop();
    }
  });
});
