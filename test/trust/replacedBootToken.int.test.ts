import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { Streams } from '../../schemas/subjects.ts';
import { CommandBus, type CommandRequest } from '../../services/platform/commands/commandBus.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { createJoinToken } from '../../services/trust/joinToken/create.ts';
import { contestBoot } from '../../services/trust/ramdiskBoot/contestBoot.ts';
import { recordBootToken } from '../../services/trust/ramdiskBoot/recordBootToken.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { readPrefix } from '../support/diskFile.ts';
import { startImageServer } from '../support/imageServer.ts';
import { streamMessages } from '../support/plaintextScan.ts';

/**
 * The boot token service's bus under load: the boot's first token is recorded at once and answered after 6 s (past the
 * site's 5 s); the second is recorded 2.5 s after it is asked for, so it lands mid-way between two of the wait's reads
 * of the boot (one every 5 s while it waits) rather than in step with them, as the 5 s timeout plus 5 s Retry-After
 * would put it.
 */
class SlowBootTokens extends CommandBus {
  #recorded = 0;

  override async execute(request: CommandRequest) {
    if (request.name !== recordBootToken.name) return super.execute(request);
    const nth = ++this.#recorded;
    if (nth === 2) await sleep(2_500);
    const result = await super.execute(request);
    if (nth === 1) await sleep(6_000);
    return result;
  }
}

/**
 * The fleet bench's BOOT_CONTESTED / SECOND_REGISTRATION under load (issue 34; no step attempt failed in those runs):
 * the site's boot token request outlived its 5 s timeout after `join` had recorded the token, so the machine's iPXE got
 * a 503, asked again after its Retry-After, and the boot's token was replaced for the same ticket. `wait.agentJoined`
 * had read the boot with the first token and judged the boot's own ramdisk, registered with the second, on that copy
 * (unless it happened to read the boot again between the second token and the join, which the timing here avoids).
 */
describe('a ramdisk boot whose token was replaced while the wait ran', () => {
  it('takes the boot’s own ramdisk and the deploy completes', { timeout: 180_000 }, async () => {
    await using engine = await startEngine();
    await using image = await startImageServer();
    const { nc, store, bus, log } = engine;
    const joins = startJoinService(nc, store, log);
    const tokenBus = new SlowBootTokens(store, [createJoinToken, recordBootToken, contestBoot], { retries: 5 });
    const bootTokens = startBootTokenService(nc, store, log, { bus: tokenBus });
    const site = await startSimulatedSite(
      nc,
      {
        siteId: 'rt',
        machines: 1,
        bmcPortBase: 0,
        dataDir: join(engine.dataDir, 'sim', 'rt'),
        diskSizeBytes: 4 << 20,
        bmcDelayMs: 10,
        join: {},
        inProcess: (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' }),
      },
      log,
    );
    const nodeId = 'rt-m001';
    const machine = site.machines[0]!;
    try {
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
      await bus.execute({
        name: 'metal.deploy',
        payload: { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker' },
        commandId: 'deploy-rt-m001',
        actor: 'test',
      });
      await engine.waitForNode(nodeId, (s) => s.exists && s.state !== 'deploying', 120_000);
      const events = await streamMessages(nc, Streams.events.name);
      const body = (text: string) => JSON.parse(text.slice(text.indexOf('\n') + 1)) as { events: { type: string; data: Record<string, unknown> }[] };
      const all = events.flatMap((m) => body(m.text).events);
      expect(all.filter((e) => e.type === 'WorkflowFailed').map((e) => e.data.reason)).toEqual([]);
      expect(await engine.nodeState(nodeId)).toMatchObject({ state: 'deployed' });
      expect(readPrefix(machine.disks[0]!, image.image.length).equals(image.image)).toBe(true);
      // One boot, one ticket, two tokens: the second replaced the first, and no step attempt failed.
      const issued = all.filter((e) => e.type === 'RamdiskBootTokenIssued').map((e) => e.data);
      expect(issued).toHaveLength(2);
      expect(issued[1]).toMatchObject({ bootId: issued[0]!.bootId, ticketId: issued[0]!.ticketId });
      expect(all.filter((e) => e.type === 'StepFailed')).toEqual([]);
      expect(all.filter((e) => e.type === 'RamdiskBootContested')).toEqual([]);
      expect(all.filter((e) => e.type === 'AgentRegistered' && e.data.role === 'ramdisk').map((e) => e.data.joinTokenId)).toEqual([issued[1]!.tokenId]);
    } finally {
      await site.stop();
      await bootTokens.stop();
      await joins.stop();
    }
  });
});
