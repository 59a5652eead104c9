import { describe, expect, it } from 'vitest';
import type { HostModuleReport } from '../../schemas/agent/hostModules.ts';
import type { FleetSnapshot, SnapshotAssignment, SnapshotHeartbeat } from '../../schemas/autonomy/snapshot.ts';
import { checkBindings, firstLaneBindings } from '../../services/autonomy/bindings.ts';
import { PolicyCatalog } from '../../services/autonomy/policies.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import { hostModulesSensor } from '../../services/autonomy/sensors/hostModules.ts';
import { runPass } from '../../services/autonomy/sensors/runPass.ts';
import { defaultSensorSettings } from '../../services/autonomy/sensors/sensor.ts';
import { deployedHost, emptySnapshot, NOW } from './fixtures.ts';

const MIN = 60_000;
const GRACE = 10 * MIN;
const settings = { ...defaultSensorSettings, moduleReportGraceMs: GRACE };
const iso = (agoMs: number) => new Date(Date.parse(NOW) - agoMs).toISOString();
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

const report = (name: string, version: string, over: Partial<HostModuleReport> = {}): HostModuleReport => ({
  name,
  version,
  digest: A,
  state: 'active',
  probes: [{ name: 'runs', ok: true }],
  ...over,
});
const beat = (nodeId: string, modules: HostModuleReport[], over: Partial<SnapshotHeartbeat> = {}): SnapshotHeartbeat => ({
  nodeId,
  agentId: `node-${nodeId}`,
  role: 'node',
  heardAt: iso(5_000),
  modules,
  ...over,
});
const plan = (nodeId: string, modules: SnapshotAssignment['modules'], assignedAgoMs = 30 * MIN): SnapshotAssignment => ({
  nodeId,
  assignedAt: iso(assignedAgoMs),
  planDigest: 'p'.repeat(64),
  modules,
});
const snapshot = (over: Partial<FleetSnapshot>): FleetSnapshot => ({ ...emptySnapshot(), heartbeatsSince: iso(60 * MIN), ...over });
const assess = (s: FleetSnapshot) => hostModulesSensor.assess(s, settings);
const kinds = (s: FleetSnapshot) => assess(s).signals.map((x) => `${x.kind}/${x.key} ${x.facts.modules}`);

describe('host-modules sensor', () => {
  it('is quiet for a host that reports exactly its pinned plan (a pending reboot included)', () => {
    const s = snapshot({
      nodes: [deployedHost('n1')],
      heartbeats: [beat('n1', [report('nginx', '1.2.0'), report('kmod', '2.0.0', { digest: B, state: 'pending', probes: [] })])],
      assignments: [
        plan('n1', [
          { name: 'nginx', version: '1.2.0', digest: A },
          { name: 'kmod', version: '2.0.0', digest: B },
        ]),
      ],
    });
    expect(assess(s)).toEqual({ assessed: 1, signals: [] });
  });

  it('sees drift: another version, the same version with another digest, a module the plan does not pin', () => {
    const s = snapshot({
      nodes: [deployedHost('n1', { siteId: 'dc2' }), deployedHost('n2'), deployedHost('n3')],
      heartbeats: [
        beat('n1', [report('nginx', '1.1.0')]),
        beat('n2', [report('nginx', '1.2.0', { digest: B })]),
        beat('n3', [report('nginx', '1.2.0'), report('old-tool', '0.1.0')]),
      ],
      assignments: ['n1', 'n2', 'n3'].map((n) => plan(n, [{ name: 'nginx', version: '1.2.0', digest: A }])),
    });
    const { signals } = assess(s);
    expect(signals.map((x) => `${x.kind}/${x.key} ${x.facts.modules}`)).toEqual(['module-drift/n1 nginx', 'module-drift/n2 nginx', 'module-drift/n3 old-tool']);
    // Shaped like every other node lane: keyed and targeted by node, with its site.
    expect(signals[0]).toEqual({
      kind: 'module-drift',
      sensor: 'host-modules',
      key: 'n1',
      target: { type: 'node', id: 'n1' },
      siteId: 'dc2',
      detail: `nginx 1.1.0 (${A.slice(0, 12)}) reported, 1.2.0 (${A.slice(0, 12)}) pinned`,
      facts: { modules: 'nginx' },
      controlPlane: false,
    });
    expect(signals[2]!.detail).toBe('old-tool 0.1.0 reported, not pinned');
  });

  it('gives a freshly assigned plan the grace to be applied before its old versions count as drift', () => {
    const s = snapshot({
      nodes: [deployedHost('n1')],
      heartbeats: [beat('n1', [report('nginx', '1.1.0')])],
      assignments: [plan('n1', [{ name: 'nginx', version: '1.2.0', digest: A }], GRACE - 1_000)],
    });
    expect(kinds(s)).toEqual([]);
    expect(kinds({ ...s, assignments: [plan('n1', [{ name: 'nginx', version: '1.2.0', digest: A }], GRACE + 1_000)] })).toEqual(['module-drift/n1 nginx']);
  });

  it('sees a failed probe at once, on any reported module, pinned or not and within the grace', () => {
    const s = snapshot({
      nodes: [deployedHost('n1'), deployedHost('n2')],
      heartbeats: [
        beat('n1', [report('nginx', '1.2.0', { state: 'failed', probes: [{ name: 'listens', ok: false }] })]),
        // The heartbeat was cut to fit: the state alone says a probe failed.
        beat('n2', [report('nginx', '1.2.0', { state: 'failed', probes: [] })]),
      ],
      assignments: [plan('n1', [{ name: 'nginx', version: '1.2.0', digest: A }], 1_000)],
    });
    const { signals } = assess(s);
    expect(signals.map((x) => `${x.kind}/${x.key} ${x.detail}`)).toEqual([
      'module-verify-failed/n1 nginx 1.2.0: probe listens failed',
      'module-verify-failed/n2 nginx 1.2.0: failed',
    ]);
  });

  it('reads a host never heard as never reported once the grace is over: absence is not health', () => {
    const s = snapshot({
      nodes: [deployedHost('n1')],
      heartbeats: [],
      assignments: [plan('n1', [{ name: 'nginx', version: '1.2.0', digest: A }])],
    });
    const [signal] = assess(s).signals;
    expect(signal).toMatchObject({ kind: 'module-never-reported', key: 'n1', facts: { modules: 'nginx' } });
    expect(signal!.detail).toContain('no heartbeat heard');
    // A ramdisk's heartbeat says nothing of the installed host's modules.
    expect(kinds({ ...s, heartbeats: [beat('n1', [], { role: 'ramdisk' })] })).toEqual(['module-never-reported/n1 nginx']);
  });

  it('reads a pinned module missing from a heard heartbeat as not reported', () => {
    const s = snapshot({
      nodes: [deployedHost('n1')],
      heartbeats: [beat('n1', [report('nginx', '1.2.0')])],
      assignments: [
        plan('n1', [
          { name: 'nginx', version: '1.2.0', digest: A },
          { name: 'exporter', version: '0.3.0', digest: B },
        ]),
      ],
    });
    const { signals } = assess(s);
    expect(signals.map((x) => `${x.kind}/${x.key} ${x.facts.modules}`)).toEqual(['module-never-reported/n1 exporter']);
    expect(signals[0]!.detail).toContain('does not list it');
  });

  it('waits the grace from the listening start, the assignment and the deploy before reading absence', () => {
    const pins = [{ name: 'nginx', version: '1.2.0', digest: A }];
    const base = snapshot({ nodes: [deployedHost('n1')], assignments: [plan('n1', pins)] });
    expect(kinds(base)).toEqual(['module-never-reported/n1 nginx']);
    expect(kinds({ ...base, heartbeatsSince: iso(GRACE - 1_000) })).toEqual([]);
    expect(kinds({ ...base, assignments: [plan('n1', pins, GRACE - 1_000)] })).toEqual([]);
    expect(kinds({ ...base, nodes: [deployedHost('n1', { updatedAt: iso(GRACE - 1_000) })] })).toEqual([]);
  });

  it('judges only deployed hosts running bcd node, and nothing pinned on a host without an assignment', () => {
    const s = snapshot({
      nodes: [deployedHost('n1', { state: 'deploying' }), deployedHost('n2', { agent: 'none' }), deployedHost('n3')],
      heartbeats: [beat('n3', [report('nginx', '9.9.9')])],
      assignments: ['n1', 'n2'].map((n) => plan(n, [{ name: 'nginx', version: '1.2.0', digest: A }])),
    });
    expect(assess(s)).toEqual({ assessed: 1, signals: [] });
  });

  it('fails its pass when no heartbeats are listened to and a host has a pinned plan, rather than call it healthy', () => {
    const s = snapshot({ heartbeatsSince: null, nodes: [deployedHost('n1')], assignments: [plan('n1', [{ name: 'nginx', version: '1.2.0', digest: A }])] });
    const { reports, signals } = runPass([hostModulesSensor], s, settings);
    expect(reports).toEqual([
      { sensor: 'host-modules', ok: false, error: 'no heartbeats are listened to: the modules of 1 host(s) with a pinned plan are unknown' },
    ]);
    expect(signals).toEqual([]);
    // Nothing pinned anywhere: nothing to know, nothing claimed.
    expect(runPass([hostModulesSensor], { ...s, assignments: [] }, settings).reports).toEqual([{ sensor: 'host-modules', ok: true, assessed: 0, signals: 0 }]);
  });

  it('is a first-lane sensor whose signals bind to the declared module-health category', () => {
    expect(firstLaneSensors).toContain(hostModulesSensor);
    const policies = new PolicyCatalog();
    expect(checkBindings(firstLaneBindings, firstLaneSensors, policies)).toEqual([]);
    for (const kind of hostModulesSensor.emits) expect(firstLaneBindings.find((b) => b.signal === kind)?.category).toBe('module-health');
    expect(policies.get('module-health')).toMatchObject({ owner: 'modules', disposition: 'notify', kind: 'advisory' });
  });
});
