import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { Streams } from '../../schemas/subjects.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { heartbeatSeen } from '../support/agentHeartbeats.ts';
import { readPrefix } from '../support/diskFile.ts';
import { startImageServer } from '../support/imageServer.ts';
import { streamMessages } from '../support/plaintextScan.ts';

const siteId = 'al';
const nodeId = 'al-m001';

describe('a ramdisk that dies in the middle of image.write', () => {
  it('fails the step with AGENT_LOST within the heartbeat timeout, boots a new ramdisk and deploys', { timeout: 120_000 }, async () => {
    await using engine = await startEngine({ agentHeartbeatTimeoutMs: 3_000 });
    // ~4 s per download: the crash lands while the image is being written.
    await using image = await startImageServer(4 << 20, { bytesPerSecond: 1 << 20 });
    const { nc, store, bus, log } = engine;
    const joins = startJoinService(nc, store, log);
    const bootTokens = startBootTokenService(nc, store, log);
    const site = await startSimulatedSite(
      nc,
      {
        siteId,
        machines: 1,
        bmcPortBase: 0,
        dataDir: join(engine.dataDir, 'sim', siteId),
        diskSizeBytes: 8 << 20,
        bmcDelayMs: 10,
        ramdiskHeartbeatIntervalMs: 300,
        join: {},
        inProcess: (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' }),
      },
      log,
    );
    const machine = site.machines[0]!;
    try {
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');

      const writing = heartbeatSeen(nc, siteId, nodeId, '-s3-a1');
      const deploy = await bus.execute({
        name: 'metal.deploy',
        payload: { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker' },
        commandId: 'deploy-al-m001',
        actor: 'test',
      });
      const workflowId = (deploy.events.find((e) => e.type === 'NodeOperationRequested')!.data as { workflowId: string }).workflowId;
      const write1 = `${workflowId}-s3-a1`;
      const lostRamdisk = (await writing).agentId;
      await machine.crashRamdisk();
      const crashedAt = Date.now();

      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'deployed', 90_000);
      expect(readPrefix(machine.disks[0]!, image.image.length).equals(image.image)).toBe(true);

      const events = (await streamMessages(nc, Streams.events.name))
        .filter((m) => m.subject === `bc.evt.metal.workflow.${workflowId}`)
        .flatMap((m) => (JSON.parse(m.data) as { events: { type: string; data: Record<string, unknown>; metadata: { time: string } }[] }).events);
      const lost = events.find((e) => e.type === 'StepFailed' && e.data.code === 'AGENT_LOST')!;
      expect(lost.data).toMatchObject({ stepIndex: 3, attempt: 1, retryable: true });
      // Within the timeout (3 s) and a check interval, not the step's 30 minutes.
      expect(Date.parse(lost.metadata.time) - crashedAt).toBeLessThan(10_000);
      expect(events.find((e) => e.type === 'WorkflowRewound')?.data).toMatchObject({ fromStepIndex: 3, toStepIndex: 0, code: 'AGENT_LOST' });

      // The boot ran again with new attempt numbers, a new ramdisk joined, and it wrote the image as attempt 2.
      const wf = (await bus.repository.load(workflowAggregate, workflowId)).state;
      if (!wf.exists) throw new Error('no workflow');
      expect(wf.status).toBe('completed');
      expect(wf.progress.map((p) => [p.status, p.attempt])).toEqual([
        ['succeeded', 2],
        ['succeeded', 2],
        ['succeeded', 2],
        ['succeeded', 2],
        ['succeeded', 1],
        ['succeeded', 1],
        ['succeeded', 1],
      ]);
      expect((wf.progress[2]!.output as { agentId: string }).agentId).not.toBe(lostRamdisk);
      expect(machine.bootScripts).toHaveLength(2);

      // Each image.write attempt was published once, to its own boot's ramdisk; the lost one was never sent again.
      const writes = (await streamMessages(nc, Streams.agentCommands.name))
        .map((m) => JSON.parse(m.data) as { commandId: string; kind: string })
        .filter((c) => c.kind === 'image.write')
        .map((c) => c.commandId);
      expect(writes).toEqual([write1, `${workflowId}-s3-a2`]);
    } finally {
      await site.stop();
      await bootTokens.stop();
      await joins.stop();
    }
  });
});
