import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { getNode } from '../../projections/nodes/queries.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';
import type { AgentPresenceLookup } from '../../schemas/agent/agentPresence.ts';
import { fakeInventory } from './fakeAgent.ts';

/** A node agent of `role` heard `ageMs` ago, in a 30 s window. */
const heard = (role: 'ramdisk' | 'node', ageMs = 1_000): AgentPresenceLookup => ({
  presenceOf: () => ({
    presence: { agentId: `a-${role}`, role, heardAt: new Date(Date.now() - ageMs).toISOString(), startedAt: null, lastError: null, drivers: [], modules: [] },
    alive: ageMs <= 30_000,
  }),
});

function project(events: PlatformEvent[], presence?: AgentPresenceLookup) {
  const db = new Database(':memory:');
  for (const m of nodesProjection.migrations) db.exec(m);
  events.forEach((e, i) => {
    const metadata = { time: `2026-12-02T12:00:${String(i).padStart(2, '0')}.000Z` } as EventMetadata;
    nodesProjection.apply(db, e, metadata, { seq: i + 1, subject: 'bc.evt.x.y.z' });
  });
  return getNode(db, 'n1', presence);
}

const enrolled = (agent?: 'none' | 'bcd'): PlatformEvent => ({
  type: 'NodeEnrolled',
  data: {
    nodeId: 'n1',
    siteId: 'dc1',
    bmc: { address: 'https://b', credentialsRef: 'secret:b' },
    hardwareProfile: 'x',
    macs: ['52:54:00:aa:bb:01'],
    addresses: ['10.0.0.9'],
    ...(agent ? { poolId: 'p1', agent } : {}),
  },
});
const op = (
  type: 'NodeOperationRequested' | 'NodeOperationCompleted',
  operation: 'inspect' | 'deploy' | 'release' | 'rescue',
  workflowId: string,
): PlatformEvent =>
  type === 'NodeOperationRequested'
    ? { type, data: { nodeId: 'n1', siteId: 'dc1', operation, workflowId, inputs: {} } }
    : { type, data: { nodeId: 'n1', operation, workflowId } };
const registered = (role: 'ramdisk' | 'node'): PlatformEvent => ({
  type: 'AgentRegistered',
  data: { agentId: `a-${role}`, role, siteId: 'dc1', nodeId: 'n1', publicKey: 'k', keyId: 'kid' },
});
const inventory: PlatformEvent = {
  type: 'NodeInventoryRecorded',
  data: {
    nodeId: 'n1',
    workflowId: 'wf-00000000000a',
    inventory: { ...fakeInventory, nics: [{ id: '1', mac: '52:54:00:aa:bb:01', ipv4Addresses: ['10.9.0.7'] }] },
  },
};
const ready = [op('NodeOperationRequested', 'inspect', 'wf-00000000000a'), inventory, op('NodeOperationCompleted', 'inspect', 'wf-00000000000a')];

describe('nodes read model for pools', () => {
  it('node views show the pool, its agent and the addresses Redfish reported', () => {
    expect(project([enrolled('none'), ...ready])).toMatchObject({
      poolId: 'p1',
      agent: 'none',
      addresses: ['10.0.0.9', '10.9.0.7'],
      connected: false,
      schedulable: false,
    });
    expect(project([enrolled(), ...ready])).toMatchObject({ poolId: null, agent: 'bcd', connected: false, schedulable: true });
  });

  it('connected follows a registered ramdisk while an operation runs it and the OS agent once deployed, while they heartbeat', () => {
    const deploying = [enrolled('bcd'), ...ready, op('NodeOperationRequested', 'deploy', 'wf-00000000000b')];
    expect(project(deploying, heard('ramdisk'))).toMatchObject({ state: 'deploying', connected: false, schedulable: false });
    expect(project([...deploying, registered('ramdisk')], heard('ramdisk'))).toMatchObject({ connected: true });
    const deployed = [...deploying, registered('ramdisk'), op('NodeOperationCompleted', 'deploy', 'wf-00000000000b')];
    expect(project(deployed, heard('ramdisk'))).toMatchObject({ state: 'deployed', connected: false });
    expect(project([...deployed, registered('node')], heard('node'))).toMatchObject({ state: 'deployed', connected: true });
  });

  it('regression (a deployed host whose agent died was shown connected): a registered agent that no longer heartbeats is not connected', () => {
    const deployed = [
      enrolled('bcd'),
      ...ready,
      op('NodeOperationRequested', 'deploy', 'wf-00000000000b'),
      op('NodeOperationCompleted', 'deploy', 'wf-00000000000b'),
      registered('node'),
    ];
    expect(project(deployed)).toMatchObject({ state: 'deployed', connected: false, lastHeartbeat: null });
    expect(project(deployed, heard('node', 31_000))).toMatchObject({ connected: false, lastHeartbeat: expect.objectContaining({ agentId: 'a-node' }) });
    // The ramdisk of the deploy, still heard: not the installed OS's agent.
    expect(project(deployed, heard('ramdisk'))).toMatchObject({ connected: false });
    expect(project(deployed, heard('node'))).toMatchObject({ connected: true });
  });

  it('an agentless node is never connected, even if something registered in its name', () => {
    expect(
      project([enrolled('none'), ...ready, op('NodeOperationRequested', 'deploy', 'wf-00000000000b'), registered('ramdisk')], heard('ramdisk')),
    ).toMatchObject({
      connected: false,
      schedulable: false,
    });
  });
});
