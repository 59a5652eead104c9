import { describe, expect, it } from 'vitest';
import { describeStep } from '../../services/console/app/src/approvals/approvalWords.ts';
import { actionsFor, bulkActionsFor, bulkPlan, nodeActions } from '../../services/console/app/src/nodes/nodeActions.ts';
import { nodeRowOf } from '../../schemas/metal/nodeRow.ts';
import { matchesFilter, refinesFilter } from '../../services/console/app/src/nodes/nodeMatches.ts';
import type { NodeView } from '../../schemas/metal/views.ts';

const node = (patch: Partial<NodeView>): NodeView => ({
  nodeId: 'n1',
  siteId: 'dc1',
  state: 'ready',
  maintenance: false,
  maintenanceReason: null,
  maintenanceSource: null,
  tenantId: null,
  role: null,
  bmcAddress: 'https://10.0.0.9',
  bmcCredentialsRef: 'secret:n1',
  bmcAuth: 'auto',
  bmcTls: 'system',
  bmcBootMode: null,
  hardwareProfile: 'hp',
  macs: [],
  enrolledAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  lastSeq: 1,
  operation: null,
  workflowId: null,
  waitingReason: null,
  failure: null,
  inventory: null,
  inBandInventory: null,
  inventoryFindings: null,
  addresses: [],
  poolId: null,
  agent: 'bcd',
  connected: false,
  lastHeartbeat: null,
  schedulable: true,
  operatorLabels: {},
  labels: { 'bc.dev/site': 'dc1' },
  ...patch,
});
const ids = (role: Parameters<typeof actionsFor>[0], n: NodeView) => actionsFor(role, n).map((a) => a.id);

describe('console node actions', () => {
  it('offers a viewer and an approver nothing, whatever the node', () => {
    for (const role of ['viewer', 'approver'] as const) {
      for (const state of ['ready', 'deployed', 'failed', 'rescue'] as const) expect(ids(role, node({ state, maintenance: state === 'failed' }))).toEqual([]);
    }
  });

  it('offers a tenant the verbs its token may send, and never maintenance or retry', () => {
    expect(ids('tenant', node({ state: 'deployed', tenantId: 'acme' }))).toEqual(['release', 'rescue']);
    expect(ids('tenant', node({ state: 'rescue', tenantId: 'acme' }))).toEqual(['unrescue']);
    expect(ids('tenant', node({ state: 'failed', tenantId: 'acme' }))).toEqual([]);
  });

  it('offers an operator what the node state allows', () => {
    expect(ids('operator', node({ state: 'ready' }))).toEqual(['deploy', 'rescue', 'maintenance-on', 'retire']);
    expect(ids('operator', node({ state: 'failed' }))).toEqual(['maintenance-on', 'retry', 'retire']);
    expect(ids('admin', node({ state: 'deploying', operation: 'deploy', workflowId: 'wf-1' }))).toEqual(['maintenance-on', 'cancel']);
    // Retire only an idle node the decider takes (enrolled, ready, failed), never a deployed one or one at work.
    expect(ids('operator', node({ state: 'enrolled' }))).toContain('retire');
    expect(ids('operator', node({ state: 'deployed' }))).not.toContain('retire');
    expect(ids('tenant', node({ state: 'ready', tenantId: 'acme' }))).not.toContain('retire');
    // An agentless node has no ramdisk to rescue into.
    expect(ids('operator', node({ state: 'deployed', agent: 'none' }))).toEqual(['release', 'maintenance-on']);
  });

  it('offers no rescue of a failed node, which the API refuses (regression: issue 37)', () => {
    expect(ids('operator', node({ state: 'failed' }))).not.toContain('rescue');
  });

  it('offers no deploy or retry in maintenance, the rule the API holds (regression: issue 37, deploy offered then refused)', () => {
    expect(ids('operator', node({ state: 'ready', maintenance: true }))).toEqual(['rescue', 'maintenance-off', 'retire']);
    expect(ids('operator', node({ state: 'failed', maintenance: true }))).toEqual(['maintenance-off', 'retire']);
    expect(ids('tenant', node({ state: 'ready', maintenance: true }))).toEqual(['rescue']);
  });

  it('offers operators a cancel of the running operation, and tenants none (regression: issue 37, no Cancel button)', () => {
    const running = node({ state: 'wiping', operation: 'release', workflowId: 'wf-2', tenantId: 'acme' });
    expect(ids('operator', running)).toContain('cancel');
    expect(ids('tenant', running)).not.toContain('cancel');
    expect(ids('operator', node({ state: 'deployed' }))).not.toContain('cancel');
  });
});

describe('console bulk actions', () => {
  const fleet = [node({ nodeId: 'a', state: 'deployed' }), node({ nodeId: 'b', state: 'ready' }), node({ nodeId: 'c', state: 'ready', maintenance: true })];

  it('offers what at least one selected node allows, never deploy or retire, and nothing to a viewer', () => {
    expect(bulkActionsFor('operator', fleet).map((a) => a.id)).toEqual(['release', 'rescue', 'maintenance-on', 'maintenance-off']);
    expect(bulkActionsFor('viewer', fleet)).toEqual([]);
  });

  it('sends an action only to the nodes it is offered on, and says which it skips', () => {
    const on = nodeActions.find((a) => a.id === 'maintenance-on')!;
    const { applies, skipped } = bulkPlan('operator', on, fleet);
    expect([applies.map((n) => n.nodeId), skipped.map((n) => n.nodeId)]).toEqual([['a', 'b'], ['c']]);
  });
});

describe('console node search', () => {
  it('keeps a node re-read live in a searched list only while the search still finds it, as the API would', () => {
    const full = node({ nodeId: 'rack1-db1', macs: ['52:54:00:BB:00:02'], addresses: ['10.0.4.7'], state: 'ready' });
    const n = { ...nodeRowOf(full), serial: 'SN-4711' };
    for (const q of ['DB1', 'bb:00', '10.0.4', ' rack1 ', 'sn-47']) expect(matchesFilter(n, { q })).toBe(true);
    expect(matchesFilter(n, { q: 'web' })).toBe(false);
    expect(matchesFilter(n, { q: 'rack1', state: 'deployed' })).toBe(false);
  });

  it('narrows a list read in full only to a filter that selects a subset of it; a widened or changed filter reads again', () => {
    expect(refinesFilter({ siteId: 'dc1' }, {})).toBe(true);
    expect(refinesFilter({ siteId: 'dc1', state: 'ready' }, { siteId: 'dc1' })).toBe(true);
    expect(refinesFilter({ q: 'Rack1-DB' }, { q: ' rack1' })).toBe(true);
    expect(refinesFilter({}, { siteId: 'dc1' })).toBe(false);
    expect(refinesFilter({ siteId: 'dc2' }, { siteId: 'dc1' })).toBe(false);
    expect(refinesFilter({ q: 'rack' }, { q: 'rack1' })).toBe(false);
    expect(refinesFilter({ siteId: 'dc1' }, { siteId: 'dc1', state: '' })).toBe(true);
  });
});

describe('approval words', () => {
  it('says what each destructive step does to the machine, with the parameters the digest covers', () => {
    expect(describeStep({ stepId: 'image.write', params: { imageUrl: 'http://img/a.raw', sha256: 'ab'.repeat(32) } })).toBe(
      'overwrite the disk with the image http://img/a.raw (sha256 abababababab…)',
    );
    expect(describeStep({ stepId: 'disk.wipe', params: { mode: 'zero' } })).toBe('wipe every disk (overwrite with zeros)');
    expect(describeStep({ stepId: 'power.set', params: { action: 'off' } })).toBe('power the machine off');
    expect(describeStep({ stepId: 'acme.flash', params: { slot: 2 } })).toBe('run acme.flash with {"slot":2}');
  });
});
