import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { getNode, listNodes } from '../../projections/nodes/queries.ts';
import type { AgentPresenceLookup } from '../../schemas/agent/agentPresence.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';
import { LabelSelector } from '../../schemas/metal/nodeLabels.ts';
import { fakeInventory } from './fakeAgent.ts';

/** `bcd node` of every node heard a second ago, advertising crun. */
const crunAdvertised: AgentPresenceLookup = {
  presenceOf: (nodeId) => ({
    presence: {
      agentId: `node-${nodeId}`,
      role: 'node',
      heardAt: new Date(Date.now() - 1_000).toISOString(),
      startedAt: null,
      lastError: null,
      drivers: [{ id: 'crun', version: '1.8.1+deb12u1', kinds: ['runtime'] }],
      modules: [],
    },
    alive: true,
  }),
};

function projected(events: PlatformEvent[]) {
  const db = new Database(':memory:');
  for (const m of nodesProjection.migrations) db.exec(m);
  events.forEach((e, i) => nodesProjection.apply(db, e, { time: '2026-12-02T12:00:00.000Z' } as EventMetadata, { seq: i + 1, subject: 'bc.evt.x.y.z' }));
  return db;
}

const enrolled = (nodeId: string, siteId = 'dc1'): PlatformEvent => ({
  type: 'NodeEnrolled',
  data: { nodeId, siteId, bmc: { address: 'https://b', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
});
const labelled = (nodeId: string, labels: Record<string, string>): PlatformEvent => ({ type: 'NodeLabelsSet', data: { nodeId, labels } });
const inspected = (nodeId: string): PlatformEvent => ({
  type: 'NodeInventoryRecorded',
  data: { nodeId, workflowId: 'wf-00000000000a', inventory: fakeInventory },
});
const deployed = (nodeId: string): PlatformEvent[] => [
  { type: 'NodeOperationRequested', data: { nodeId, siteId: 'dc1', operation: 'deploy', workflowId: 'wf-00000000000b', inputs: {} } },
  { type: 'NodeOperationCompleted', data: { nodeId, operation: 'deploy', workflowId: 'wf-00000000000b' } },
];
const selector = (s: unknown) => LabelSelector.parse(s);

describe('node labels in the nodes read model', () => {
  it("a node view carries the operator's labels and the effective ones: site, then inventory once recorded", () => {
    const db = projected([enrolled('n1'), labelled('n1', { zone: 'a' })]);
    expect(getNode(db, 'n1')).toMatchObject({ operatorLabels: { zone: 'a' }, labels: { zone: 'a', 'bc.dev/site': 'dc1' } });
    nodesProjection.apply(db, inspected('n1'), { time: '2026-12-02T12:00:01.000Z' } as EventMetadata, { seq: 3, subject: 'bc.evt.x.y.z' });
    expect(getNode(db, 'n1')?.labels).toEqual({ zone: 'a', 'bc.dev/site': 'dc1', 'bc.dev/cpu.cores': '32', 'bc.dev/memory.mib': '262144' });
    nodesProjection.apply(db, labelled('n1', {}), { time: '2026-12-02T12:00:02.000Z' } as EventMetadata, { seq: 4, subject: 'bc.evt.x.y.z' });
    expect(getNode(db, 'n1')).toMatchObject({ operatorLabels: {}, labels: { 'bc.dev/site': 'dc1', 'bc.dev/cpu.cores': '32' } });
  });

  it('a deployed node carries a label for each driver its bcd node advertises; a node not deployed carries none', () => {
    const db = projected([enrolled('n1'), enrolled('n2'), inspected('n1'), ...deployed('n1')]);
    expect(getNode(db, 'n1', crunAdvertised)?.labels).toMatchObject({ 'bc.dev/driver.crun': '1.8.1_deb12u1' });
    expect(getNode(db, 'n2', crunAdvertised)?.labels).toEqual({ 'bc.dev/site': 'dc1' });
    expect(getNode(db, 'n1')?.labels).not.toHaveProperty('bc.dev/driver.crun');
  });

  it('lists the nodes a selector matches, derived and operator labels alike, a page at a time', () => {
    const db = projected([
      enrolled('n1'),
      enrolled('n2', 'dc2'),
      enrolled('n3'),
      labelled('n1', { zone: 'a' }),
      labelled('n3', { zone: 'a', gpu: '' }),
      ...deployed('n3'),
    ]);
    const ids = (filter: Partial<Parameters<typeof listNodes>[1]>, presence?: AgentPresenceLookup) =>
      listNodes(db, { limit: 100, ...filter }, presence).items.map((n) => n.nodeId);
    expect(ids({ selector: selector({ matchLabels: { zone: 'a' } }) })).toEqual(['n1', 'n3']);
    expect(ids({ selector: selector({ matchLabels: { 'bc.dev/site': 'dc2' } }) })).toEqual(['n2']);
    expect(ids({ selector: selector({ matchLabels: { zone: 'a' }, matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }) })).toEqual(['n3']);
    expect(ids({ selector: selector({ matchExpressions: [{ key: 'bc.dev/driver.crun', operator: 'Exists' }] }) }, crunAdvertised)).toEqual(['n3']);
    expect(ids({ selector: selector({ matchExpressions: [{ key: 'bc.dev/driver.crun', operator: 'Exists' }] }) })).toEqual([]);
    const first = listNodes(db, { limit: 1, selector: selector({ matchLabels: { zone: 'a' } }) });
    expect(first.items.map((n) => n.nodeId)).toEqual(['n1']);
    const second = listNodes(db, { limit: 1, selector: selector({ matchLabels: { zone: 'a' } }), cursor: first.nextCursor! });
    expect([second.items.map((n) => n.nodeId), second.nextCursor]).toEqual([['n3'], null]);
  });

  it('finds matches beyond the first batch of rows it reads, and says when there are more', () => {
    const events: PlatformEvent[] = [];
    for (let i = 0; i < 1_200; i++) events.push(enrolled(`n${String(i).padStart(4, '0')}`));
    events.push(labelled('n0700', { zone: 'b' }), labelled('n1100', { zone: 'b' }), labelled('n1199', { zone: 'b' }));
    const db = projected(events);
    const page = listNodes(db, { limit: 2, selector: selector({ matchLabels: { zone: 'b' } }) });
    expect(page.items.map((n) => n.nodeId)).toEqual(['n0700', 'n1100']);
    expect(page.nextCursor).not.toBeNull();
    const rest = listNodes(db, { limit: 2, selector: selector({ matchLabels: { zone: 'b' } }), cursor: page.nextCursor! });
    expect([rest.items.map((n) => n.nodeId), rest.nextCursor]).toEqual([['n1199'], null]);
  });
});
