import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { apiClient } from '../support/apiClient.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';
import { openReadModel } from '../support/readModelDb.ts';

const MACHINES = 10;
const CAP = 3;
const nodeIds = Array.from({ length: MACHINES }, (_, i) => `sim-m${String(i + 1).padStart(3, '0')}`);

interface Snapshot {
  runningDeploys: number;
  waiting: string[];
}

/** Most deploy workflows in flight at once, from their start and end times (an end at t frees its slot before a start at t). */
function maxOverlap(intervals: { started_at: string; ended_at: string }[]): number {
  const edges = intervals.flatMap((w) => [
    { at: Date.parse(w.started_at), delta: 1 },
    { at: Date.parse(w.ended_at), delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let max = 0;
  for (const e of edges) max = Math.max(max, (now += e.delta));
  return max;
}

describe('per-site deploy cap with ten simulated machines', () => {
  it(`orchestrator runs at most ${CAP} of ${MACHINES} simultaneous deploys and queues the rest as waiting-for-capacity`, { timeout: 180_000 }, async () => {
    await using image = await startImageServer(256 * 1024);
    await using stack = await startProcessStack({
      layout: 'single',
      machines: MACHINES,
      env: { BC_MAX_DEPLOYS_PER_SITE: String(CAP), BC_TEST_SIM_DISK_BYTES: String(8 << 20), BC_TEST_SIM_BMC_DELAY_MS: '50' },
    });
    const client = apiClient(stack.api, stack.token);
    for (const nodeId of nodeIds) await client.waitForNodeState(nodeId, 'ready', 90_000);

    // Watch the fleet while the deploys run: node waiting reasons (API) and running deploys (workflows table).
    using db = openReadModel(stack.dataDir, 'workflows');
    const runningDeploys = db.prepare(`SELECT count(*) AS n FROM workflows WHERE operation = 'deploy' AND state = 'running'`).pluck();
    const snapshots: Snapshot[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const nodes = (await client.getJson(`/v1/nodes?siteId=sim&limit=100`)).items as { nodeId: string; state: string; waitingReason: string | null }[];
        const waiting = nodes.filter((n) => n.state === 'deploying' && n.waitingReason === 'waiting-for-capacity').map((n) => n.nodeId);
        snapshots.push({ runningDeploys: runningDeploys.get() as number, waiting });
        await sleep(50);
      }
    })();

    const deploys = await Promise.all(
      nodeIds.map((nodeId) => client.command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] })),
    );
    expect(deploys.map((d) => d.status)).toEqual(nodeIds.map(() => 201));
    try {
      for (const nodeId of nodeIds) await client.waitForNodeState(nodeId, 'deployed', 120_000);
    } finally {
      watching = false;
      await watcher;
    }

    const workflows = db
      .prepare(`SELECT workflow_id, node_id, state, started_at, ended_at FROM workflows WHERE operation = 'deploy' ORDER BY started_at, workflow_id`)
      .all() as { workflow_id: string; node_id: string; state: string; started_at: string; ended_at: string }[];
    expect(workflows.map((w) => w.state)).toEqual(nodeIds.map(() => 'completed'));
    expect(new Set(workflows.map((w) => w.node_id))).toEqual(new Set(nodeIds));
    expect(maxOverlap(workflows)).toBe(CAP);
    expect(Math.max(...snapshots.map((s) => s.runningDeploys))).toBeLessThanOrEqual(CAP);

    // Each node started after the first CAP was seen queued while the site was full.
    const queued = workflows.slice(CAP).map((w) => w.node_id);
    const seenWaitingAtCap = new Set(snapshots.filter((s) => s.runningDeploys === CAP).flatMap((s) => s.waiting));
    expect(queued.filter((nodeId) => !seenWaitingAtCap.has(nodeId))).toEqual([]);
    const nodes = await Promise.all(nodeIds.map((nodeId) => client.node(nodeId)));
    expect(nodes.map((n) => [n.state, n.waitingReason])).toEqual(nodeIds.map(() => ['deployed', null]));
  });
});
