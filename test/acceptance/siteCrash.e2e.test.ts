import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { heartbeatSeen } from '../support/agentHeartbeats.ts';
import { apiClient } from '../support/apiClient.ts';
import { deployAttemptsAfterLostWrite } from '../support/crashEvidence.ts';
import { deployEvidence } from '../support/deployEvidence.ts';
import { readPrefix } from '../support/diskFile.ts';
import { freePort } from '../support/freePort.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';
import { startSimulatedSiteProcess } from '../support/simulatedSiteProcess.ts';

const siteId = 'sim';
const nodeId = 'sim-m001';
const HEARTBEAT_TIMEOUT_MS = 15_000;

describe('the site agent and its machines killed in the middle of image.write', () => {
  it('fails the write with AGENT_LOST within the heartbeat timeout, boots the machine again and deploys it', { timeout: 300_000 }, async () => {
    // ~16 s per download: the kill lands while the image is being written.
    await using image = await startImageServer(4 << 20, { bytesPerSecond: 256 << 10 });
    await using stack = await startProcessStack({
      layout: 'single',
      machines: 1,
      // A fixed BMC port: the restarted site serves the machine at the address it was enrolled with.
      env: { BC_SIM_BMC_PORT_BASE: String(await freePort()), BC_AGENT_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS) },
    });
    const nc = await stack.connect('site-crash-observer');
    try {
      const client = apiClient(stack.api, stack.token);
      await client.waitForNodeState(nodeId, 'ready', 60_000);
      const writing = heartbeatSeen(nc, siteId, nodeId, '-s3-a1');
      const deploy = await client.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] });
      expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
      const workflowId: string = deploy.body.events.find((e: { type: string }) => e.type === 'NodeOperationRequested').data.workflowId;
      await writing;

      // The whole site goes: site agent, BMCs, the machine and its ramdisk. Its supervisor starts it again.
      stack.site.child.kill('SIGKILL');
      const killedAt = Date.now();
      await new Promise((resolve) => stack.site.child.once('exit', resolve));
      await using restarted = await startSimulatedSiteProcess(stack.env, 120_000);

      const deployed = await client.waitForNodeState(nodeId, 'deployed', 180_000).catch((err: Error) => {
        throw new Error(`${err.message}\n${stack.logs()}\n--- restarted site\n${restarted.output().slice(-3000)}`);
      });
      expect(deployed.state).toBe('deployed');
      expect(readPrefix(join(stack.dataDir, 'sim', siteId, 'machines', nodeId, 'disk0.img'), image.image.length).equals(image.image)).toBe(true);

      const workflow = await client.getJson(`/v1/workflows/${workflowId}`);
      expect(workflow.state).toBe('completed');
      // The boot ran again (attempt 2 of each boot step), and the write succeeded as its second attempt.
      expect(workflow.steps.map((s: { stepId: string; attempts: number }) => [s.stepId, s.attempts])).toEqual(deployAttemptsAfterLostWrite);
      const { items } = (await client.getJson(`/v1/events?aggregate=metal.workflow/${workflowId}`)) as {
        items: { type: string; data: Record<string, unknown>; metadata: { time: string } }[];
      };
      const lost = items.find((e) => e.type === 'StepFailed' && e.data.code === 'AGENT_LOST');
      expect(lost?.data).toMatchObject({ stepIndex: 3, attempt: 1 });
      // Found lost within the heartbeat timeout and a check, not after the step's 30 minutes.
      expect(Date.parse(lost!.metadata.time) - killedAt).toBeLessThan(HEARTBEAT_TIMEOUT_MS + 15_000);

      // Each destructive command was sent once per attempt; the lost write was never sent again.
      const evidence = await deployEvidence({ nc, dataDir: stack.dataDir, siteId, nodeId, workflowId });
      const ids = evidence.stored.map((c) => c.commandId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.filter((id) => id.includes('-s3-'))).toEqual([`${workflowId}-s3-a1`, `${workflowId}-s3-a2`]);
    } finally {
      await nc.close();
    }
  });
});
