import { describe, expect, it } from 'vitest';
import { foldNodeHistory, type NodeBatch } from '../../services/metal/node/history.ts';
import type { StoredEvent } from '../../schemas/envelope.ts';
import { HistoryInstant } from '../../schemas/metal/nodeHistory.ts';

const at = (time: string, actor = 'token:ops') => ({ time, actor });
const batch = (seq: number, when: { time: string; actor: string }, ...events: { type: string; data: unknown }[]): NodeBatch => ({
  seq,
  events: events.map((e, i): StoredEvent => ({
    type: e.type,
    version: 1,
    data: e.data,
    metadata: {
      eventId: `e${seq}-${i}`,
      aggregateType: 'metal.node',
      aggregateId: 'n1',
      commandId: `c${seq}`,
      commandName: 'x',
      correlationId: `c${seq}`,
      causationId: `c${seq}`,
      actor: when.actor,
      time: when.time,
    },
  })),
});

const wf = 'wf-000000000001';
const log: NodeBatch[] = [
  batch(3, at('2026-01-01T10:00:00.000Z'), {
    type: 'NodeEnrolled',
    data: {
      nodeId: 'n1',
      siteId: 'dc1',
      bmc: { address: 'https://10.0.0.9', credentialsRef: 'secret:n1' },
      hardwareProfile: 'hp',
      macs: ['52:54:00:00:00:01'],
    },
  }),
  batch(7, at('2026-01-01T10:05:00.000Z', 'token:acme'), {
    type: 'NodeOperationRequested',
    data: { nodeId: 'n1', siteId: 'dc1', operation: 'deploy', workflowId: wf, inputs: {}, tenantId: 'acme' },
  }),
  batch(12, at('2026-01-01T10:09:00.000Z', 'engine'), { type: 'NodeOperationCompleted', data: { nodeId: 'n1', operation: 'deploy', workflowId: wf } }),
  batch(15, at('2026-01-01T10:20:00.000Z'), { type: 'NodeMaintenanceSet', data: { nodeId: 'n1', on: true, reason: 'fan', source: 'operator' } }),
];

describe('foldNodeHistory', () => {
  it('folds the node up to the instant asked for, by stream sequence or by time', () => {
    expect(foldNodeHistory('n1', log, { seq: 7 })?.node).toMatchObject({ state: 'deploying', operation: 'deploy', workflowId: wf, tenantId: 'acme' });
    expect(foldNodeHistory('n1', log, { seq: 11 })?.at).toEqual({ seq: 7, time: '2026-01-01T10:05:00.000Z' });
    expect(foldNodeHistory('n1', log, { time: '2026-01-01T10:07:30.000Z' })?.node.state).toBe('deploying');
    expect(foldNodeHistory('n1', log, { time: '2026-01-01T10:09:00.000Z' })?.node).toMatchObject({ state: 'deployed', operation: null, tenantId: 'acme' });
    expect(foldNodeHistory('n1', log, undefined)?.node).toMatchObject({
      state: 'deployed',
      maintenance: true,
      maintenanceReason: 'fan',
      maintenanceSource: 'operator',
    });
  });

  it('lists every batch with the state it left, whatever instant is picked', () => {
    const history = foldNodeHistory('n1', log, { seq: 3 })!;
    expect(history.timeline.map((e) => [e.seq, e.state, e.events, e.actor])).toEqual([
      [3, 'enrolled', ['NodeEnrolled'], 'token:ops'],
      [7, 'deploying', ['NodeOperationRequested'], 'token:acme'],
      [12, 'deployed', ['NodeOperationCompleted'], 'engine'],
      [15, 'deployed', ['NodeMaintenanceSet'], 'token:ops'],
    ]);
    expect(history.node).toMatchObject({ state: 'enrolled', tenantId: null, macs: ['52:54:00:00:00:01'], agent: 'bcd' });
  });

  it("shows the operator's labels as they were at the instant", () => {
    const labelled = [...log, batch(20, at('2026-01-01T10:30:00.000Z'), { type: 'NodeLabelsSet', data: { nodeId: 'n1', labels: { zone: 'a' } } })];
    expect(foldNodeHistory('n1', labelled, { seq: 15 })?.node.operatorLabels).toEqual({});
    expect(foldNodeHistory('n1', labelled, { seq: 20 })?.node.operatorLabels).toEqual({ zone: 'a' });
  });

  it('has no answer before the node existed', () => {
    expect(foldNodeHistory('n1', log, { seq: 2 })).toBeUndefined();
    expect(foldNodeHistory('n1', log, { time: '2025-12-31T00:00:00.000Z' })).toBeUndefined();
    expect(foldNodeHistory('n1', [], undefined)).toBeUndefined();
  });

  it('folds every batch but shows only the visible ones (a tenant: from when it took the node on)', () => {
    const fromOwnership = (seq: number) => seq >= 7;
    const history = foldNodeHistory('n1', log, undefined, fromOwnership)!;
    expect(history.timeline.map((e) => e.seq)).toEqual([7, 12, 15]);
    // The state still comes from the whole log: the enrollment's facts are there.
    expect(history.node).toMatchObject({ siteId: 'dc1', hardwareProfile: 'hp' });
    expect(foldNodeHistory('n1', log, { seq: 5 }, fromOwnership)).toBeUndefined();
  });
});

describe('HistoryInstant', () => {
  it('reads digits as a stream sequence and an ISO time with offset as an instant, and nothing else', () => {
    expect(HistoryInstant.parse('42')).toEqual({ seq: 42 });
    expect(HistoryInstant.parse('2026-01-01T11:00:00+01:00')).toEqual({ time: '2026-01-01T10:00:00.000Z' });
    for (const bad of ['-1', 'yesterday', '2026-01-01', '4x']) expect(HistoryInstant.safeParse(bad).success).toBe(false);
  });
});
