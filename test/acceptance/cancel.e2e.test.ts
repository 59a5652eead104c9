import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { heartbeatSeen } from '../support/agentHeartbeats.ts';
import { apiClient } from '../support/apiClient.ts';
import { deployEvidence } from '../support/deployEvidence.ts';
import { readPrefix } from '../support/diskFile.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';

const bin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));
const siteId = 'sim';
const nodeId = 'sim-m001';

describe('metal.cancel on a running stack', () => {
  it('lets the running image.write finish, starts nothing after it, and leaves the node failed in maintenance', { timeout: 300_000 }, async () => {
    // ~8 s per download: the cancel lands while the image is being written.
    await using image = await startImageServer(4 << 20, { bytesPerSecond: 512 << 10 });
    await using stack = await startProcessStack({ layout: 'single', machines: 1 });
    const nc = await stack.connect('cancel-observer');
    try {
      const admin = apiClient(stack.api, stack.token);
      await admin.waitForNodeState(nodeId, 'ready', 60_000);
      expect((await admin.command('metal.cancel', { nodeId })).body).toMatchObject({ code: 'ILLEGAL_TRANSITION' });

      const writing = heartbeatSeen(nc, siteId, nodeId, '-s3-a1');
      const deploy = await admin.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] });
      expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
      const workflowId: string = deploy.body.events.find((e: { type: string }) => e.type === 'NodeOperationRequested').data.workflowId;
      await writing;

      // Tenants cannot cancel; operators can, from the CLI, and it waits for the workflow to stop.
      const tenant = await fetch(`${stack.api}/v1/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.token}` },
        body: JSON.stringify({ role: 'tenant', tenantId: 'acme' }),
      }).then(async (r) => ((await r.json()) as { token: string }).token);
      expect((await apiClient(stack.api, tenant).command('metal.cancel', { nodeId })).status).toBe(403);
      const cli = await promisify(execFile)(
        process.execPath,
        [bin, '--api', stack.api, '--token', stack.token, 'metal', 'cancel', nodeId, '--reason', 'wrong image', '--wait'],
        {
          env: { ...process.env, BC_API_TOKEN: '' },
        },
      );
      expect(cli.stdout).toMatch(/deploy cancelled: wrong image/);

      const failed = await admin.waitForNodeState(nodeId, 'failed', 30_000);
      expect(failed).toMatchObject({ maintenance: true });
      expect(JSON.stringify(failed)).toContain('cancelled: wrong image');
      const workflow = await admin.getJson(`/v1/workflows/${workflowId}`);
      expect(workflow.state).toBe('cancelled');
      expect(workflow.steps.map((s: { stepId: string; state: string }) => [s.stepId, s.state])).toEqual([
        ['boot.setOnce', 'succeeded'],
        ['power.set', 'succeeded'],
        ['wait.agentJoined', 'succeeded'],
        ['image.write', 'succeeded'],
        ['userdata.write', 'pending'],
        ['boot.clear', 'pending'],
        ['power.set', 'pending'],
      ]);
      // The write was not cut in half: the whole image is on the disk, and its journal says finished.
      expect(readPrefix(join(stack.dataDir, 'sim', siteId, 'machines', nodeId, 'disk0.img'), image.image.length).equals(image.image)).toBe(true);
      const evidence = await deployEvidence({ nc, dataDir: stack.dataDir, siteId, nodeId, workflowId });
      expect(evidence.journal.filter((r) => r.commandId === `${workflowId}-s3-a1`).map((r) => [r.finished, r.ok])).toEqual([[true, true]]);
      // Nothing was sent after it.
      expect(evidence.stored.map((c) => c.commandId)).toEqual([0, 1, 3].map((i) => `${workflowId}-s${i}-a1`));
    } finally {
      await nc.close();
    }
  });
});
