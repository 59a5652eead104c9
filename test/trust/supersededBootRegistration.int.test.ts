import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { Streams } from '../../schemas/subjects.ts';
import { bootIdOf } from '../../schemas/trust/ramdiskBoot.ts';
import { CommandBus, type CommandRequest } from '../../services/platform/commands/commandBus.ts';
import { countRefusals } from '../../services/trust/refusals/countRefusals.ts';
import { registerAgent } from '../../services/trust/agent/register.ts';
import { useJoinToken } from '../../services/trust/joinToken/use.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { ramdiskBootAggregate } from '../../services/trust/ramdiskBoot/ramdiskBoot.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { readPrefix } from '../support/diskFile.ts';
import { startImageServer } from '../support/imageServer.ts';
import { streamMessages } from '../support/plaintextScan.ts';

/** The join service's bus, holding the registration of the first ramdisk that joins until `release()`: a join in flight. */
class HeldFirstRegistration extends CommandBus {
  heldToken: string | undefined;
  #release!: () => void;
  readonly #gate = new Promise<void>((resolve) => (this.#release = resolve));

  release(): void {
    this.#release();
  }

  override async execute(request: CommandRequest) {
    const tokenId = (request.payload as { joinTokenId?: string; role?: string }).joinTokenId;
    if (request.name === registerAgent.name && (request.payload as { role?: string }).role === 'ramdisk' && tokenId) {
      this.heldToken ??= tokenId;
      if (tokenId === this.heldToken) await this.#gate;
    }
    return super.execute(request);
  }
}

async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * Issue 34, the sequence first suspected of the fleet bench's BOOT_CONTESTED (the bench's own one was a replaced token:
 * `replacedBootToken.int.test.ts`): a `power.set cycle` attempt reset the machine, which fetched its boot's script
 * (token T1, boot a1) and sent its join, and then the attempt failed (the BMC stopped answering the site's polls). The
 * retried attempt reset the machine again (boot a2) while that join was still in flight; it was stored after a2 began,
 * and `wait.agentJoined` of a2 took it for a hostile second registration. The bare retry also booted the disk: the
 * reset of a1 had spent the one-time PXE override.
 */
describe('a ramdisk of a superseded boot registering late', () => {
  it('is ignored: the wait takes the current boot’s ramdisk and the deploy completes', { timeout: 180_000 }, async () => {
    await using engine = await startEngine();
    await using image = await startImageServer();
    const { nc, store, bus, log } = engine;
    const joinBus = new HeldFirstRegistration(store, [useJoinToken, registerAgent, countRefusals], { retries: 5 });
    const joins = startJoinService(nc, store, log, { bus: joinBus });
    const bootTokens = startBootTokenService(nc, store, log);
    const site = await startSimulatedSite(
      nc,
      {
        siteId: 'sb',
        machines: 1,
        bmcPortBase: 0,
        dataDir: join(engine.dataDir, 'sim', 'sb'),
        diskSizeBytes: 4 << 20,
        bmcDelayMs: 10,
        join: {},
        inProcess: (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' }),
      },
      log,
    );
    const nodeId = 'sb-m001';
    const machine = site.machines[0]!;
    const systemUri = (machine.bmc.resource('/redfish/v1/Systems') as { Members: { '@odata.id': string }[] }).Members[0]!['@odata.id'];
    try {
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
      // The first network boot: the host is up, but the BMC goes on showing the restart, so the site keeps polling.
      let pxeBoots = 0;
      machine.bmc.onBoot((target) => {
        if (target === 'Pxe' && ++pxeBoots === 1) (machine.bmc.resource(systemUri) as { PowerState: string }).PowerState = 'PoweringOn';
      });
      await bus.execute({
        name: 'metal.deploy',
        payload: { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker' },
        commandId: 'deploy-sb-m001',
        actor: 'test',
      });
      const workflowId = await until('the deploy', async () => {
        const node = await engine.nodeState(nodeId);
        return node.exists ? node.current?.workflowId : undefined;
      });
      const workflow = async () => {
        const wf = (await bus.repository.load(workflowAggregate, workflowId)).state;
        if (!wf.exists) throw new Error(`no workflow ${workflowId}`);
        return wf;
      };
      // The orchestrator starts the workflow once the node took the deploy.
      await until('the workflow', async () => ((await bus.repository.load(workflowAggregate, workflowId)).state.exists ? true : undefined));
      const { steps } = await workflow();
      const power = steps.findIndex((s, i) => s.id === 'power.set' && steps[i + 1]?.id === 'wait.agentJoined');
      const firstBoot = bootIdOf({ workflowId, stepIndex: power, attempt: 1 });

      // Boot a1 fetched its script and its ramdisk's join is in flight (held at the join service).
      await until('the first boot’s token', async () => (await bus.repository.load(ramdiskBootAggregate, firstBoot)).state.issued ?? undefined);
      await until('the first ramdisk’s join', async () => joinBus.heldToken);
      // Then the power step's attempt fails: the BMC stops answering. The retry resets the machine again.
      machine.bmc.setReachable(false);
      await until('the failed power attempt', async () => ((await workflow()).progress[power]!.status !== 'running' ? true : undefined));
      (machine.bmc.resource(systemUri) as { PowerState: string }).PowerState = 'On';
      machine.bmc.setReachable(true);
      const waiting = await until('the wait of the retried boot', async () => {
        const wf = await workflow();
        return wf.progress[power + 1]!.status === 'running' ? wf : undefined;
      });
      expect(waiting.progress[power]!.attempt).toBe(2);
      joinBus.release();

      await engine.waitForNode(nodeId, (s) => s.exists && s.state !== 'deploying', 120_000);
      expect(await engine.nodeState(nodeId)).toMatchObject({ state: 'deployed' });
      expect(readPrefix(machine.disks[0]!, image.image.length).equals(image.image)).toBe(true);

      const events = await streamMessages(nc, Streams.events.name);
      const body = (text: string) => JSON.parse(text.slice(text.indexOf('\n') + 1)) as { events: { type: string; data: Record<string, unknown> }[] };
      const all = events.flatMap((m) => body(m.text).events.map((e) => ({ ...e, subject: m.subject })));
      // The late registration was stored after the retried reset began: the sequence the bench hit.
      const late = events.find((m) => m.text.includes('"AgentRegistered"') && m.text.includes(`"joinTokenId":"${joinBus.heldToken}"`));
      const lateAt = (body(late!.text) as unknown as { events: { metadata: { time: string } }[] }).events[0]!.metadata.time;
      expect(Date.parse(lateAt)).toBeGreaterThan(Date.parse(waiting.progress[power]!.attemptStartedAt!));
      expect(all.filter((e) => e.type === 'RamdiskBootContested')).toEqual([]);
      // The failed reset armed the network boot again before the next one (a bare retry boots the disk).
      expect(all.filter((e) => e.type === 'WorkflowRewound').map((e) => e.data)).toMatchObject([{ fromStepIndex: power, toStepIndex: 0 }]);
      const issued = all.filter((e) => e.type === 'RamdiskBootTokenIssued').map((e) => e.data.attempt);
      expect(issued).toEqual([1, 2]);
    } finally {
      joinBus.release();
      await site.stop();
      await bootTokens.stop();
      await joins.stop();
    }
  });
});
