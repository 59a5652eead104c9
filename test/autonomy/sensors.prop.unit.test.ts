import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { cooldownMsOf, HOUR_MS } from '../../schemas/autonomy/policies.ts';
import type { FleetSnapshot } from '../../schemas/autonomy/snapshot.ts';
import { checkBindings, defineBinding, firstLaneBindings } from '../../services/autonomy/bindings.ts';
import { PolicyCatalog } from '../../services/autonomy/policies.ts';
import { defineSensor, defaultSensorSettings } from '../../services/autonomy/sensors/sensor.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import { runPass } from '../../services/autonomy/sensors/runPass.ts';
import { emptySnapshot, NOW } from './fixtures.ts';

const iso = (offsetMs: number) => new Date(Date.parse(NOW) - offsetMs).toISOString();
const nodeId = fc.integer({ min: 0, max: 30 }).map((i) => `n${i}`);
const siteId = fc.constantFrom('dc1', 'dc2');
const moduleName = fc.constantFrom('nginx', 'exporter', 'tools');
const moduleVersion = fc.constantFrom('1.0.0', '1.1.0');
const digest = (c: string) => c.repeat(64);
const snapshotArb: fc.Arbitrary<FleetSnapshot> = fc.record({
  at: fc.constant(NOW),
  nodes: fc.uniqueArray(
    fc.record({
      nodeId,
      siteId,
      state: fc.constantFrom('ready', 'failed', 'deployed', 'deploying'),
      maintenance: fc.boolean(),
      maintenanceSource: fc.constantFrom(null, 'operator' as const, 'bmc' as const),
      failure: fc.option(
        fc.record({
          operation: fc.constantFrom('deploy', 'release', null),
          reason: fc.string({ maxLength: 20 }),
          failedStep: fc.constantFrom(null, 'image.write'),
        }),
        { nil: null },
      ),
      waitingReason: fc.constantFrom(null, 'waiting-for-capacity'),
      updatedAt: fc.integer({ min: 0, max: 3 * HOUR_MS }).map(iso),
      agent: fc.constantFrom('bcd' as const, 'none' as const),
      controlPlane: fc.boolean(),
    }),
    { selector: (n) => n.nodeId, maxLength: 25 },
  ),
  bmc: fc.uniqueArray(
    fc.record({ nodeId, siteId, consecutiveFailures: fc.integer({ min: 0, max: 6 }), lastError: fc.constantFrom(null, 'ECONNREFUSED'), at: fc.constant(NOW) }),
    { selector: (b) => b.nodeId, maxLength: 25 },
  ),
  runningSteps: fc.uniqueArray(
    fc.record({
      workflowId: fc.integer({ min: 0, max: 20 }).map((i) => `wf-${String(i).padStart(12, '0')}`),
      nodeId,
      siteId: fc.option(siteId, { nil: null }),
      stepId: fc.constant('image.write'),
      startedAt: fc.integer({ min: 0, max: 4 * HOUR_MS }).map(iso),
      timeoutMs: fc.integer({ min: 60_000, max: HOUR_MS }),
    }),
    { selector: (s) => s.workflowId, maxLength: 10 },
  ),
  instances: fc.uniqueArray(
    fc.record({
      instanceId: fc.integer({ min: 0, max: 20 }).map((i) => `i${i}`),
      tenantId: fc.constant('t1'),
      desired: fc.constantFrom('running', 'stopped', 'deleted'),
      observed: fc.constantFrom(null, 'running', 'error'),
      message: fc.constant(null),
      placement: fc.option(fc.record({ siteId, nodeId }), { nil: null }),
    }),
    { selector: (i) => i.instanceId, maxLength: 10 },
  ),
  agents: fc.uniqueArray(
    fc.record({
      agentId: fc.integer({ min: 0, max: 20 }).map((i) => `site-a${i}`),
      role: fc.constant('site'),
      siteId,
      nodeId: fc.constant(null),
      keySince: fc.integer({ min: 0, max: 200 * 24 * HOUR_MS }).map(iso),
      rotationRequestedAt: fc.option(fc.integer({ min: 0, max: 2 * HOUR_MS }).map(iso), { nil: null }),
    }),
    { selector: (a) => a.agentId, maxLength: 10 },
  ),
  heartbeats: fc.uniqueArray(
    fc.record({
      nodeId,
      agentId: nodeId.map((n) => `node-${n}`),
      role: fc.constantFrom('node' as const, 'ramdisk' as const),
      heardAt: fc.integer({ min: 0, max: HOUR_MS }).map(iso),
      modules: fc.uniqueArray(
        fc.record({
          name: moduleName,
          version: moduleVersion,
          digest: fc.constantFrom(digest('a'), digest('b')),
          state: fc.constantFrom('active' as const, 'pending' as const, 'failed' as const),
          probes: fc.array(fc.record({ name: fc.constantFrom('runs', 'listens'), ok: fc.boolean() }), { maxLength: 2 }),
        }),
        { selector: (m) => m.name, maxLength: 3 },
      ),
    }),
    { selector: (h) => h.nodeId, maxLength: 25 },
  ),
  heartbeatsSince: fc.option(fc.integer({ min: 0, max: 2 * HOUR_MS }).map(iso), { nil: null }),
  assignments: fc.uniqueArray(
    fc.record({
      nodeId,
      assignedAt: fc.integer({ min: 0, max: 2 * HOUR_MS }).map(iso),
      planDigest: fc.constant(digest('p')),
      modules: fc.uniqueArray(fc.record({ name: moduleName, version: moduleVersion, digest: fc.constantFrom(digest('a'), digest('b'), null) }), {
        selector: (m) => m.name,
        maxLength: 3,
      }),
    }),
    { selector: (a) => a.nodeId, maxLength: 25 },
  ),
  templateClosures: fc.uniqueArray(
    fc.record({
      nodeId,
      template: fc.constantFrom('web', 'db'),
      pinnedDigest: fc.constant(digest('p')),
      now: fc.oneof(
        fc.record({
          ok: fc.constant(true as const),
          planDigest: fc.constantFrom(digest('p'), digest('q')),
          changes: fc.uniqueArray(
            fc.record({ module: moduleName, from: fc.option(moduleVersion, { nil: null }), to: fc.option(moduleVersion, { nil: null }) }),
            {
              selector: (c) => c.module,
              maxLength: 3,
            },
          ),
        }),
        fc.record({
          ok: fc.constant(false as const),
          conflicts: fc.uniqueArray(fc.record({ code: fc.constantFrom('RANGE_UNSATISFIABLE', 'MODULE_UNKNOWN'), subject: moduleName }), {
            selector: (c) => `${c.code}/${c.subject}`,
            maxLength: 3,
          }),
        }),
      ),
    }),
    { selector: (c) => c.nodeId, maxLength: 25 },
  ),
});

const shuffled = <T>(items: readonly T[], seed: number): T[] => {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};

describe('sensors (acceptance 1)', () => {
  test.prop([snapshotArb, fc.integer()])('the same snapshot gives the same signals and reports in any input order', (snapshot, seed) => {
    const reordered: FleetSnapshot = {
      ...snapshot,
      nodes: shuffled(snapshot.nodes, seed),
      bmc: shuffled(snapshot.bmc, seed + 1),
      runningSteps: shuffled(snapshot.runningSteps, seed + 2),
      instances: shuffled(snapshot.instances, seed + 3),
      agents: shuffled(snapshot.agents, seed + 4),
      heartbeats: shuffled(snapshot.heartbeats, seed + 5).map((h) => ({ ...h, modules: shuffled(h.modules, seed + 6) })),
      assignments: shuffled(snapshot.assignments, seed + 7).map((a) => ({ ...a, modules: shuffled(a.modules, seed + 8) })),
      templateClosures: shuffled(snapshot.templateClosures, seed + 9).map((c) =>
        c.now.ok
          ? { ...c, now: { ...c.now, changes: shuffled(c.now.changes, seed + 10) } }
          : { ...c, now: { ...c.now, conflicts: shuffled(c.now.conflicts, seed + 11) } },
      ),
    };
    const a = runPass(firstLaneSensors, snapshot, defaultSensorSettings);
    const b = runPass(firstLaneSensors, reordered, defaultSensorSettings);
    expect(b).toEqual(a);
    // One signal per kind and key: what makes "one decision per natural key" possible downstream.
    expect(new Set(a.signals.map((s) => `${s.kind}/${s.key}`)).size).toBe(a.signals.length);
  });

  it('sees each first lane', () => {
    const snapshot: FleetSnapshot = {
      ...emptySnapshot(),
      nodes: [
        {
          nodeId: 'n1',
          siteId: 'dc1',
          state: 'failed',
          maintenance: false,
          maintenanceSource: null,
          failure: { operation: 'deploy', reason: 'boom', failedStep: 'image.write' },
          waitingReason: null,
          updatedAt: NOW,
          agent: 'bcd',
          controlPlane: false,
        },
        {
          nodeId: 'n2',
          siteId: 'dc1',
          state: 'ready',
          maintenance: false,
          maintenanceSource: null,
          failure: null,
          waitingReason: 'waiting-for-capacity',
          updatedAt: iso(HOUR_MS),
          agent: 'bcd',
          controlPlane: false,
        },
        ...(['n4', 'n5', 'n6'] as const).map((id) => ({
          nodeId: id,
          siteId: 'dc1',
          state: 'deployed',
          maintenance: false,
          maintenanceSource: null,
          failure: null,
          waitingReason: null,
          updatedAt: iso(HOUR_MS),
          agent: id === 'n6' ? ('none' as const) : ('bcd' as const),
          controlPlane: false,
        })),
      ],
      // n4's bcd node beats; n5's last beat is 10 min old; n6 is agentless and never beats.
      heartbeats: [
        { nodeId: 'n4', agentId: 'node-n4', role: 'node', heardAt: iso(5_000), modules: [] },
        { nodeId: 'n5', agentId: 'node-n5', role: 'node', heardAt: iso(10 * 60_000), modules: [] },
      ],
      heartbeatsSince: iso(HOUR_MS),
      bmc: [
        { nodeId: 'n2', siteId: 'dc1', consecutiveFailures: 3, lastError: 'ECONNREFUSED', at: NOW },
        { nodeId: 'n1', siteId: 'dc1', consecutiveFailures: 2, lastError: 'ECONNREFUSED', at: NOW },
      ],
      runningSteps: [{ workflowId: 'wf-000000000001', nodeId: 'n3', siteId: 'dc1', stepId: 'image.write', startedAt: iso(HOUR_MS), timeoutMs: 60_000 }],
      instances: [
        { instanceId: 'i1', tenantId: 't1', desired: 'running', observed: 'error', message: 'provider says no' },
        // Metal instances: on n5 (silent) and n1 (failed) their node is lost; on n4 (beating) not; one being deleted never.
        ...(['n5', 'n1', 'n4'] as const).map((id) => ({
          instanceId: `m-${id}`,
          tenantId: 't1',
          desired: 'running',
          observed: 'running',
          message: null,
          placement: { siteId: 'dc1', nodeId: id },
        })),
        { instanceId: 'm-gone', tenantId: 't1', desired: 'deleted', observed: 'deleting', message: null, placement: { siteId: 'dc1', nodeId: 'n5' } },
      ],
      agents: [
        { agentId: 'site-dc1', role: 'site', siteId: 'dc1', nodeId: null, keySince: iso(100 * 24 * HOUR_MS), rotationRequestedAt: null },
        // Asked 40 minutes ago to rotate, and it has not: its lane cannot act.
        { agentId: 'site-dc2', role: 'site', siteId: 'dc2', nodeId: null, keySince: iso(HOUR_MS), rotationRequestedAt: iso(40 * 60_000) },
      ],
    };
    const { signals, reports } = runPass(firstLaneSensors, snapshot, defaultSensorSettings);
    expect(signals.map((s) => `${s.kind}/${s.key}`)).toEqual([
      'agent-key-old/site-dc1',
      'agent-key-rotation-stalled/site-dc2',
      'bmc-unreachable/n2',
      'host-silent/n5',
      'instance-error/i1',
      'instance-host-lost/m-n1',
      'instance-host-lost/m-n5',
      'node-failed/n1',
      'queue-stale/dc1',
      'step-overdue/wf-000000000001',
    ]);
    expect(signals.find((s) => s.kind === 'node-failed')!.facts).toEqual({ operation: 'deploy' });
    expect(signals.filter((s) => s.kind === 'instance-host-lost').map((s) => s.facts)).toEqual([
      { siteId: 'dc1', nodeId: 'n1', reason: 'failed' },
      { siteId: 'dc1', nodeId: 'n5', reason: 'silent' },
    ]);
    expect(reports.every((r) => r.ok)).toBe(true);
  });

  it('reports a throwing sensor as failed without hiding the others', () => {
    const broken = defineSensor({
      name: 'broken',
      emits: ['x'],
      assess: () => {
        throw new Error('sensor fell over');
      },
    });
    const snapshot: FleetSnapshot = {
      ...emptySnapshot(),
      instances: [{ instanceId: 'i1', tenantId: 't1', desired: 'running', observed: 'error', message: null }],
    };
    const { signals, reports } = runPass([broken, ...firstLaneSensors], snapshot, defaultSensorSettings);
    expect(reports[0]).toEqual({ sensor: 'broken', ok: false, error: 'sensor fell over' });
    expect(signals.map((s) => s.kind)).toEqual(['instance-error']);
  });
});

describe('start-up check (acceptance 10) and policies', () => {
  it('accepts the first lanes and refuses a binding nobody feeds or whose category is undeclared', () => {
    const policies = new PolicyCatalog();
    expect(checkBindings(firstLaneBindings, firstLaneSensors, policies)).toEqual([]);
    const orphan = defineBinding({ signal: 'disk-smart', category: 'retry', plan: (s) => ({ action: 'none', target: s.target, params: {} }) });
    const undeclared = defineBinding({ signal: 'node-failed', category: 'reimage', plan: (s) => ({ action: 'none', target: s.target, params: {} }) });
    expect(checkBindings([orphan], firstLaneSensors, policies)).toEqual(['binding of signal "disk-smart": no sensor emits it']);
    expect(checkBindings([undeclared], firstLaneSensors, policies)).toEqual(['binding of signal "node-failed": category "reimage" is not declared']);
  });

  it('cools down 1 h, 4 h for advancement categories', () => {
    expect(cooldownMsOf({ advancement: false })).toBe(HOUR_MS);
    expect(cooldownMsOf({ advancement: true })).toBe(4 * HOUR_MS);
  });
});
