import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { getNode, listNodes } from '../../projections/nodes/queries.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';
import type { CapacityCaps } from '../../schemas/metal/workflow.ts';

const wf = (nodeId: string) => `wf-${nodeId.padStart(12, '0')}`;
const enrolled = (nodeId: string, siteId: string): PlatformEvent => ({
  type: 'NodeEnrolled',
  data: { nodeId, siteId, bmc: { address: `https://${nodeId}`, credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: [] },
});
const deploy = (nodeId: string, siteId: string, tenantId?: string): PlatformEvent => ({
  type: 'NodeOperationRequested',
  data: { nodeId, siteId, operation: 'deploy', workflowId: wf(nodeId), inputs: {}, ...(tenantId ? { tenantId } : {}) },
});
const started = (nodeId: string, siteId: string): PlatformEvent => ({
  type: 'WorkflowStarted',
  data: { workflowId: wf(nodeId), nodeId, siteId, operation: 'deploy', profile: { id: 'deploy', version: 1 }, steps: [], startedAt: 't' },
});

function project(events: PlatformEvent[]) {
  const db = new Database(':memory:');
  for (const m of nodesProjection.migrations) db.exec(m);
  events.forEach((e, i) => nodesProjection.apply(db, e, { time: `t${i}` } as EventMetadata, { seq: i + 1, subject: 'bc.evt.x.y.z' }));
  return db;
}

describe('why a node waits for capacity', () => {
  const caps: CapacityCaps = { deploys: 3, wipes: 3, tenant: { deploys: 2 } };
  const nodes = ['a1', 'a2', 'a3', 'o1'];
  const fleet = [
    ...nodes.map((n) => enrolled(n, 'dc1')),
    deploy('a1', 'dc1', 'acme'),
    deploy('a2', 'dc1', 'acme'),
    started('a1', 'dc1'),
    started('a2', 'dc1'),
    deploy('a3', 'dc1', 'acme'),
  ];

  it('names the tenant cap when the tenant is at it and its site is not, and the site cap once the site is full', () => {
    const db = project(fleet);
    expect(getNode(db, 'a3', undefined, caps)).toMatchObject({
      waitingReason: 'waiting-for-capacity',
      waitingFor: 'tenant cap (2 of 2 deploys in flight for tenant acme)',
    });
    // Without the caps (a reader not given them) only the reason is shown.
    expect(getNode(db, 'a3')).not.toHaveProperty('waitingFor');
    const full = project([...fleet, deploy('o1', 'dc1'), started('o1', 'dc1')]);
    expect(listNodes(full, { limit: 10 }, undefined, caps).items.find((n) => n.nodeId === 'a3')).toMatchObject({
      waitingFor: 'site cap (3 of 3 deploys in flight at site dc1)',
    });
    expect(getNode(full, 'a1', undefined, caps)).not.toHaveProperty('waitingFor');
  });

  it('compares with the tenant’s own caps once set, and the default again once cleared', () => {
    const own: PlatformEvent = { type: 'TenantCapsSet', data: { tenantId: 'acme', deploys: 3, wipes: null } };
    expect(getNode(project([...fleet, own]), 'a3', undefined, caps)).not.toHaveProperty('waitingFor');
    const lower: PlatformEvent = { type: 'TenantCapsSet', data: { tenantId: 'acme', deploys: 1, wipes: null } };
    expect(getNode(project([...fleet, lower]), 'a3', undefined, caps)?.waitingFor).toBe('tenant cap (2 of 1 deploys in flight for tenant acme)');
    const cleared: PlatformEvent = { type: 'TenantCapsSet', data: { tenantId: 'acme', deploys: null, wipes: null } };
    expect(getNode(project([...fleet, lower, cleared]), 'a3', undefined, caps)?.waitingFor).toBe('tenant cap (2 of 2 deploys in flight for tenant acme)');
  });
});
