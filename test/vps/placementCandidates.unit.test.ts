import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { listNodes } from '../../projections/nodes/queries.ts';
import type { AgentPresenceLookup } from '../../schemas/agent/agentPresence.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';
import { PlacementRequest } from '../../schemas/vps/placement.ts';
import { hostCapacityOf, placementSnapshotOf } from '../../services/vps/placement/candidates.ts';
import { place } from '../../services/vps/placement/placement.ts';
import { fakeInventory } from '../metal/fakeAgent.ts';

const GIB = 1_024 ** 3;

/** Each node's bcd node, heard now, advertising the drivers given for it. */
const advertising = (drivers: Record<string, string[]>): AgentPresenceLookup => ({
  presenceOf: (nodeId) => ({
    presence: {
      agentId: `node-${nodeId}`,
      role: 'node',
      heardAt: new Date().toISOString(),
      startedAt: null,
      lastError: null,
      drivers: (drivers[nodeId] ?? []).map((id) => ({ id, version: '1.0', kinds: ['runtime' as const] })),
      modules: [],
    },
    alive: true,
  }),
});

/** Node `nodeId` enrolled, inspected with `cores` and 64 GiB, deployed with its `bcd node` registered. */
function deployedHost(nodeId: string, cores: number, extra: PlatformEvent[] = []): PlatformEvent[] {
  return [
    {
      type: 'NodeEnrolled',
      data: { nodeId, siteId: 'dc1', bmc: { address: 'https://b', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
    },
    {
      type: 'NodeInventoryRecorded',
      data: {
        nodeId,
        workflowId: 'wf-00000000000a',
        inventory: {
          ...fakeInventory,
          cpus: { count: 1, model: null, cores },
          memoryMiB: 65_536,
          disks: [{ id: 'd0', sizeBytes: 500 * GIB, model: null, serial: null }],
        },
      },
    },
    { type: 'NodeOperationRequested', data: { nodeId, siteId: 'dc1', operation: 'deploy', workflowId: 'wf-00000000000b', inputs: {} } },
    { type: 'NodeOperationCompleted', data: { nodeId, operation: 'deploy', workflowId: 'wf-00000000000b' } },
    { type: 'AgentRegistered', data: { agentId: `node-${nodeId}`, role: 'node', siteId: 'dc1', nodeId, publicKey: 'k', keyId: 'kid' } },
    ...extra,
  ];
}

function nodeViews(events: PlatformEvent[], presence: AgentPresenceLookup) {
  const db = new Database(':memory:');
  for (const m of nodesProjection.migrations) db.exec(m);
  events.forEach((e, i) => nodesProjection.apply(db, e, { time: '2026-12-02T12:00:00.000Z' } as EventMetadata, { seq: i + 1, subject: 'bc.evt.x.y.z' }));
  return listNodes(db, { limit: 100 }, presence).items;
}

const request = (over: Partial<PlacementRequest> = {}) =>
  PlacementRequest.parse({ instanceId: 'i1', tenantId: 't1', poolId: 'p1', runtime: 'crun', resources: { vcpus: 4, memoryMib: 8_192, diskGib: 40 }, ...over });

describe('placement on node views', () => {
  it('takes capacity from the inventory, and nothing a node was never inspected for', () => {
    expect(hostCapacityOf({ ...fakeInventory, cpus: { count: 2, model: null, cores: 32 }, memoryMiB: 1_024, disks: [] })).toEqual({
      vcpus: 32,
      memoryMib: 1_024,
      diskGib: 0,
    });
    expect(hostCapacityOf(null)).toEqual({ vcpus: 0, memoryMib: 0, diskGib: 0 });
  });

  it("places on the deployed node carrying the runtime's driver label and the selector's operator label, and says why not the others", () => {
    const views = nodeViews(
      [
        ...deployedHost('a-crun', 16),
        ...deployedHost('b-qemu', 16),
        ...deployedHost('c-crun-maintenance', 16, [
          { type: 'NodeMaintenanceSet', data: { nodeId: 'c-crun-maintenance', on: true, reason: 'fan', source: 'operator' } },
        ]),
        ...deployedHost('d-crun-zone-b', 16, [{ type: 'NodeLabelsSet', data: { nodeId: 'd-crun-zone-b', labels: { zone: 'b' } } }]),
      ],
      advertising({ 'a-crun': ['crun'], 'b-qemu': ['qemu'], 'c-crun-maintenance': ['crun'], 'd-crun-zone-b': ['crun'] }),
    );
    const snapshot = placementSnapshotOf(views, { allocated: new Map(), holds: [], nowMs: 0 });
    expect(snapshot.candidates.find((c) => c.nodeId === 'a-crun')).toMatchObject({
      capacity: { vcpus: 16, memoryMib: 65_536, diskGib: 500 },
      schedulable: true,
      agentless: false,
      labels: { 'bc.dev/driver.crun': '1.0', 'bc.dev/cpu.cores': '16' },
    });
    expect(place(request({ selector: { matchLabels: { zone: 'b' } } }), snapshot)).toMatchObject({ placed: true, nodeId: 'd-crun-zone-b' });
    expect(place(request({ runtime: 'qemu' }), snapshot)).toMatchObject({ placed: true, nodeId: 'b-qemu' });
    expect(place(request({ selector: { matchLabels: { zone: 'c' } } }), snapshot)).toEqual({
      placed: false,
      code: 'NO_NODE_FITS',
      excluded: [
        { nodeId: 'a-crun', why: 'SELECTOR_MISMATCH' },
        { nodeId: 'b-qemu', why: 'NO_RUNTIME_DRIVER' },
        { nodeId: 'c-crun-maintenance', why: 'NOT_SCHEDULABLE' },
        { nodeId: 'd-crun-zone-b', why: 'SELECTOR_MISMATCH' },
      ],
    });
  });

  it('counts what instances already take on a node, and takes no node whose agent is not heard', () => {
    const events = [...deployedHost('a', 8), ...deployedHost('b', 16)];
    const views = nodeViews(events, advertising({ a: ['crun'], b: ['crun'] }));
    const taken = { allocated: new Map([['b', { vcpus: 14, memoryMib: 0, diskGib: 0 }]]), holds: [], nowMs: 0 };
    // b has 2 of its 16 cores left, too few for 4; a has all 8 free.
    expect(place(request(), placementSnapshotOf(views, taken))).toMatchObject({ placed: true, nodeId: 'a', freeBefore: { vcpus: 8 } });
    const silent = nodeViews(events, { presenceOf: () => undefined });
    expect(place(request(), placementSnapshotOf(silent, taken))).toMatchObject({
      placed: false,
      excluded: [
        { nodeId: 'a', why: 'NOT_SCHEDULABLE' },
        { nodeId: 'b', why: 'NOT_SCHEDULABLE' },
      ],
    });
  });
});
