import { describe, expect, it } from 'vitest';
import type { NodeView } from '../../schemas/metal/views.ts';
import {
  bmcMonitorModel,
  decideBmcMonitor,
  evolveBmcMonitor,
  type BmcMonitorModel,
  type BmcReading,
} from '../../services/processes/bmcMonitor/bmcMonitoring.ts';
import { plainReactions } from '../support/processManagerSpec.ts';

const node = (nodeId: string, view: Partial<NodeView> = {}) =>
  ({ nodeId, siteId: 'dc1', state: 'ready', maintenance: false, maintenanceSource: null, ...view }) as NodeView;
const good = (n: NodeView, probeId: string): BmcReading => ({ node: n, probeId, outcome: { ok: true }, at: Date.parse('2026-12-06T10:00:00Z') });
const failed = (n: NodeView, probeId: string): BmcReading => ({
  node: n,
  probeId,
  outcome: { ok: false, detail: 'REDFISH_UNREACHABLE connect ECONNREFUSED' },
  at: Date.parse('2026-12-06T10:00:00Z'),
});

/** Given readings already folded (as the host folds each before deciding on it), when one more comes: then these reactions. */
function given(mode: 'direct' | 'sensor', readings: readonly BmcReading[] = []) {
  const model = bmcMonitorModel({ mode, failuresBeforeMaintenance: 3 });
  for (const observation of readings) evolveBmcMonitor(model, { type: 'observed', observation });
  return {
    model,
    when(observation: BmcReading) {
      evolveBmcMonitor(model, { type: 'observed', observation });
      return plainReactions(decideBmcMonitor({ type: 'observed', observation }, model));
    },
  };
}

const m1 = node('dc1-m001');

describe('decideBmcMonitor: a tick', () => {
  it('probes every resting node, one probe per node at a time, numbered by the round', () => {
    const model: BmcMonitorModel = bmcMonitorModel({ mode: 'direct', failuresBeforeMaintenance: 3 });
    model.resting = [m1, node('dc1-m002', { state: 'deployed' })];
    evolveBmcMonitor(model, { type: 'tick', now: 1 });
    evolveBmcMonitor(model, { type: 'tick', now: 2 });
    expect(plainReactions(decideBmcMonitor({ type: 'tick', now: 2 }, model))).toEqual([
      { key: 'node:dc1-m001', coalesce: true, effects: [{ kind: 'task', task: { node: m1, round: 2 } }] },
      { key: 'node:dc1-m002', coalesce: true, effects: [{ kind: 'task', task: { node: model.resting[1], round: 2 } }] },
    ]);
  });

  it('probes nothing in a fleet with no resting node', () => {
    expect(decideBmcMonitor({ type: 'tick', now: 1 }, bmcMonitorModel({ mode: 'direct', failuresBeforeMaintenance: 3 }))).toEqual([]);
  });
});

describe('decideBmcMonitor (direct): maintenance on BMC loss', () => {
  it('waits for failuresBeforeMaintenance failed reads in a row, then puts the node into maintenance', () => {
    expect(given('direct').when(failed(m1, 'p1'))).toEqual([]);
    expect(given('direct', [failed(m1, 'p1')]).when(failed(m1, 'p2'))).toEqual([]);
    const [reaction] = given('direct', [failed(m1, 'p1'), failed(m1, 'p2')]).when(failed(m1, 'p3'));
    expect(reaction).toEqual({
      key: 'node:dc1-m001',
      effects: [
        {
          command: 'metal.reportBmcHealth',
          payload: { nodeId: 'dc1-m001', reachable: false, detail: 'REDFISH_UNREACHABLE connect ECONNREFUSED' },
          commandId: expect.stringMatching(/^bmch-[0-9a-f]{32}$/),
        },
      ],
    });
  });

  it('derives the command id from the probe: the same reading decides the same command, another probe another', () => {
    const lost = [failed(m1, 'p1'), failed(m1, 'p2')];
    const first = given('direct', lost).when(failed(m1, 'p3'))[0]!.effects[0];
    const again = given('direct', lost).when(failed(m1, 'p3'))[0]!.effects[0];
    const other = given('direct', lost).when(failed(m1, 'p4'))[0]!.effects[0];
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
  });

  it('counts failed reads in a row only: a good read starts the count again', () => {
    expect(given('direct', [failed(m1, 'p1'), failed(m1, 'p2'), good(m1, 'p3'), failed(m1, 'p4')]).when(failed(m1, 'p5'))).toEqual([]);
  });

  it('leaves a node already in maintenance alone, whoever put it there', () => {
    const held = node('dc1-m002', { maintenance: true, maintenanceSource: 'operator' });
    expect(given('direct', [failed(held, 'p1'), failed(held, 'p2')]).when(failed(held, 'p3'))).toEqual([]);
    const bmcHeld = node('dc1-m003', { maintenance: true, maintenanceSource: 'bmc' });
    expect(given('direct', [failed(bmcHeld, 'p1'), failed(bmcHeld, 'p2'), failed(bmcHeld, 'p3')]).when(failed(bmcHeld, 'p4'))).toEqual([]);
  });

  it('clears maintenance the BMC caused at the first good read, and only that', () => {
    const bmcHeld = node('dc1-m001', { maintenance: true, maintenanceSource: 'bmc' });
    expect(given('direct', [failed(bmcHeld, 'p1')]).when(good(bmcHeld, 'p2'))).toEqual([
      {
        key: 'node:dc1-m001',
        effects: [{ command: 'metal.reportBmcHealth', payload: { nodeId: 'dc1-m001', reachable: true }, commandId: expect.any(String) }],
      },
    ]);
    expect(given('direct').when(good(node('dc1-m002', { maintenance: true, maintenanceSource: 'operator' }), 'p1'))).toEqual([]);
    expect(given('direct').when(good(m1, 'p1'))).toEqual([]);
  });
});

describe('decideBmcMonitor (sensor): the node records a fleet sensor reads', () => {
  it('publishes a node record when its count moves, and nothing while it stays put', () => {
    expect(given('sensor').when(good(m1, 'p1'))).toEqual([
      {
        key: 'node:dc1-m001',
        effects: [
          {
            kind: 'publish',
            subject: 'bc.sig.obs.bmc.dc1-m001',
            data: { nodeId: 'dc1-m001', siteId: 'dc1', consecutiveFailures: 0, lastError: null, at: '2026-12-06T10:00:00.000Z' },
            msgId: 'bmco-p1',
          },
        ],
      },
    ]);
    expect(given('sensor', [good(m1, 'p1')]).when(good(m1, 'p2'))).toEqual([]);
    const [reaction] = given('sensor', [good(m1, 'p1'), failed(m1, 'p2')]).when(failed(m1, 'p3'));
    expect(reaction!.effects[0]).toMatchObject({ kind: 'publish', data: { consecutiveFailures: 2, lastError: 'REDFISH_UNREACHABLE connect ECONNREFUSED' } });
  });

  it('never decides maintenance itself', () => {
    const readings = [failed(m1, 'p1'), failed(m1, 'p2'), failed(m1, 'p3')];
    const reactions = given('sensor', readings).when(failed(m1, 'p4'));
    expect(reactions.flatMap((r) => r.effects).every((e) => 'kind' in e && e.kind === 'publish')).toBe(true);
  });
});
