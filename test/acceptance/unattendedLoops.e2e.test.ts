import { describe, expect, it } from 'vitest';
import { apiClient } from '../support/apiClient.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';
import { openReadModel } from '../support/readModelDb.ts';

const LOOPS = 20;
const nodeId = 'sim-m001';

/** Per completed release workflow of the node: how many attested, succeeded wipes it holds. */
const attestedWipesPerRelease = `
  SELECT w.workflow_id AS workflowId,
         (SELECT count(*) FROM workflow_steps s
           WHERE s.workflow_id = w.workflow_id
             AND s.step_id = 'disk.wipe'
             AND s.state = 'succeeded'
             AND json_extract(s.output, '$.attested') = 1) AS attestedWipes
    FROM workflows w
   WHERE w.node_id = ? AND w.operation = 'release' AND w.state = 'completed'
   ORDER BY w.started_at`;

describe('unattended deploy/release loops on the control plane as a process', () => {
  it(`stack returns a machine to ready ${LOOPS} times, each time after exactly one attested wipe`, { timeout: 240_000 }, async () => {
    await using image = await startImageServer(256 * 1024);
    await using stack = await startProcessStack({
      layout: 'single',
      machines: 1,
      env: { BC_TEST_SIM_DISK_BYTES: String(8 << 20), BC_TEST_SIM_BMC_DELAY_MS: '50' },
    });
    const client = apiClient(stack.api, stack.token);
    await client.waitForNodeState(nodeId, 'ready', 60_000);

    for (let loop = 0; loop < LOOPS; loop++) {
      const deploy = await client.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] });
      expect(deploy.status, JSON.stringify(deploy.body)).toBe(201);
      await client.waitForNodeState(nodeId, 'deployed', 60_000, 50);
      const release = await client.command('metal.undeploy', { nodeId });
      expect(release.status, JSON.stringify(release.body)).toBe(201);
      await client.waitForNodeState(nodeId, 'ready', 60_000, 50);
    }

    // Every transition of the node into `ready` after a release, from its event history: besides the first
    // inspection, the only operations that completed are the loops' deploys and releases, and none failed.
    const history = await client.getJson(`/v1/events?aggregate=metal.node/${nodeId}`);
    const completed: Record<string, number> = {};
    for (const e of history.items) if (e.type === 'NodeOperationCompleted') completed[e.data.operation] = (completed[e.data.operation] ?? 0) + 1;
    expect(completed).toEqual({ inspect: 1, deploy: LOOPS, release: LOOPS });
    expect(history.items.filter((e: { type: string }) => e.type === 'NodeOperationFailed')).toEqual([]);
    const releasedIntoReady = history.items
      .filter((e: { type: string; data: { operation: string } }) => e.type === 'NodeOperationCompleted' && e.data.operation === 'release')
      .map((e: { data: { workflowId: string } }) => e.data.workflowId);
    expect(releasedIntoReady).toHaveLength(LOOPS);

    // The workflows read model has applied everything the node history shows once the API answers with minSeq.
    const lastSeq = Math.max(...history.items.map((e: { seq: number }) => e.seq));
    await client.getJson(`/v1/nodes/${nodeId}/workflows?minSeq=${lastSeq}&limit=1`);
    using db = openReadModel(stack.dataDir, 'workflows');
    const rows = db.prepare(attestedWipesPerRelease).all(nodeId) as { workflowId: string; attestedWipes: number }[];
    expect(rows).toHaveLength(LOOPS);
    expect(rows.filter((r) => r.attestedWipes !== 1)).toEqual([]);
    expect(new Set(rows.map((r) => r.workflowId))).toEqual(new Set(releasedIntoReady));
    const deploys = db.prepare(`SELECT state, count(*) AS n FROM workflows WHERE node_id = ? AND operation = 'deploy' GROUP BY state`).all(nodeId);
    expect(deploys).toEqual([{ state: 'completed', n: LOOPS }]);
  });
});
