import { describe, expect, it } from 'vitest';
import type { FleetSnapshot, SnapshotTemplateClosure } from '../../schemas/autonomy/snapshot.ts';
import type { ModuleManifest } from '../../schemas/fleet/moduleManifest.ts';
import { TEMPLATE_INCLUDE_REACH_MAX } from '../../schemas/fleet/templateCommands.ts';
import type { TemplateView } from '../../schemas/fleet/views.ts';
import type { TemplateAssignment } from '../../projections/modules/queries.ts';
import { checkBindings, firstLaneBindings } from '../../services/autonomy/bindings.ts';
import { PolicyCatalog } from '../../services/autonomy/policies.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import { runPass } from '../../services/autonomy/sensors/runPass.ts';
import { defaultSensorSettings } from '../../services/autonomy/sensors/sensor.ts';
import { templateClosureDriftSensor } from '../../services/autonomy/sensors/templateClosureDrift.ts';
import { planDigestOf } from '../../services/fleet/assignment/hostPlan.ts';
import { templateClosuresOf } from '../../services/processes/fleetSensors/templateClosures.ts';
import { deployedHost, emptySnapshot } from './fixtures.ts';

const P = 'p'.repeat(64);
const Q = 'q'.repeat(64);
const closure = (nodeId: string, now: SnapshotTemplateClosure['now']): SnapshotTemplateClosure => ({ nodeId, template: 'web', pinnedDigest: P, now });
const snapshot = (over: Partial<FleetSnapshot>): FleetSnapshot => ({ ...emptySnapshot(), ...over });
const assess = (s: FleetSnapshot) => templateClosureDriftSensor.assess(s, defaultSensorSettings);

describe('template-closure-drift sensor', () => {
  it('is quiet for a host whose template resolves to the plan it is pinned to', () => {
    expect(assess(snapshot({ nodes: [deployedHost('n1')], templateClosures: [closure('n1', { ok: true, planDigest: P, changes: [] })] }))).toEqual({
      assessed: 1,
      signals: [],
    });
  });

  it('signals a host whose template now resolves to another plan, with each module from -> to', () => {
    const changes = [
      { module: 'tools', from: null, to: '1.0.0' },
      { module: 'nginx', from: '1.0.0', to: '1.1.0' },
      { module: 'old', from: '2.0.0', to: null },
    ];
    const { signals } = assess(
      snapshot({ nodes: [deployedHost('n1', { siteId: 'dc2' })], templateClosures: [closure('n1', { ok: true, planDigest: Q, changes })] }),
    );
    expect(signals).toEqual([
      {
        kind: 'template-closure-drift',
        sensor: 'template-closure-drift',
        key: 'n1',
        target: { type: 'node', id: 'n1' },
        siteId: 'dc2',
        detail: 'template web resolves to another plan than the pinned one: nginx 1.0.0 -> 1.1.0; old 2.0.0 -> (none); tools (none) -> 1.0.0',
        facts: { template: 'web', modules: 'nginx,old,tools', changes: 'nginx 1.0.0 -> 1.1.0,old 2.0.0 -> (none),tools (none) -> 1.0.0' },
        controlPlane: false,
      },
    ]);
  });

  it('signals a host whose template no longer resolves, with the conflict codes and what they name', () => {
    const conflicts = [
      { code: 'RANGE_UNSATISFIABLE', subject: 'nginx' },
      { code: 'EXCLUSIVE_CONFLICT', subject: 'http' },
    ];
    const { signals } = assess(snapshot({ nodes: [deployedHost('n1', { controlPlane: true })], templateClosures: [closure('n1', { ok: false, conflicts })] }));
    expect(signals.map((s) => [s.key, s.facts, s.controlPlane])).toEqual([
      ['n1', { template: 'web', conflicts: 'EXCLUSIVE_CONFLICT:http,RANGE_UNSATISFIABLE:nginx' }, true],
    ]);
    expect(signals[0]!.detail).toBe('template web no longer resolves: EXCLUSIVE_CONFLICT:http; RANGE_UNSATISFIABLE:nginx');
  });

  it('judges only hosts the fleet still has, one signal per host in node order', () => {
    const drifted = { ok: true as const, planDigest: Q, changes: [{ module: 'nginx', from: '1.0.0', to: '1.1.0' }] };
    const s = snapshot({
      nodes: [deployedHost('n2'), deployedHost('n1'), deployedHost('n3', { state: 'retired' })],
      templateClosures: [closure('n2', drifted), closure('n3', drifted), closure('n1', drifted), closure('gone', drifted)],
    });
    expect(assess(s)).toMatchObject({ assessed: 2, signals: [{ key: 'n1' }, { key: 'n2' }] });
  });

  it('is a first-lane sensor bound to the module-health category', () => {
    expect(firstLaneSensors).toContain(templateClosureDriftSensor);
    expect(checkBindings(firstLaneBindings, firstLaneSensors, new PolicyCatalog())).toEqual([]);
    expect(firstLaneBindings.find((b) => b.signal === 'template-closure-drift')).toMatchObject({ category: 'module-health' });
    const { reports } = runPass([templateClosureDriftSensor], emptySnapshot(), defaultSensorSettings);
    expect(reports).toEqual([{ sensor: 'template-closure-drift', ok: true, assessed: 0, signals: 0 }]);
  });
});

const manifest = (name: string, version: string, over: Partial<ModuleManifest> = {}): ModuleManifest => ({
  name,
  version,
  provides: [],
  requires: [],
  exclusive: [],
  rebootRequired: false,
  probes: [],
  files: [],
  ...over,
});
const template = (templateId: string, requires: TemplateView['requires'], includes: string[] = []): TemplateView => ({
  templateId,
  requires,
  includes,
  definedAt: '2026-12-01T00:00:00.000Z',
  definedBy: 'test',
});
const assigned = (nodeId: string, plan: Record<string, string>, pins: TemplateAssignment['pins'] = []): TemplateAssignment => ({
  nodeId,
  template: 'web',
  pins,
  plan,
  planDigest: planDigestOf(plan),
});

describe('template closures in the snapshot: each template-assigned host resolved again over the read model', () => {
  const catalogue = [manifest('nginx', '1.0.0'), manifest('nginx', '1.1.0'), manifest('nginx', '2.0.0'), manifest('tools', '1.0.0')];

  it('gives the pinned digest back for a host in sync, and the changes when the template moved or a version was published', async () => {
    const templates = [template('web', [{ module: 'nginx', range: '^1' }], ['base']), template('base', [{ module: 'tools', range: '*' }])];
    const closures = await templateClosuresOf(
      [
        assigned('n1', { nginx: '1.1.0', tools: '1.0.0' }),
        assigned('n2', { nginx: '1.0.0' }),
        assigned('n3', { nginx: '1.0.0', tools: '1.0.0' }, [{ module: 'nginx', version: '1.0.0' }]),
      ],
      templates,
      catalogue,
    );
    expect(closures).toEqual([
      {
        nodeId: 'n1',
        template: 'web',
        pinnedDigest: planDigestOf({ nginx: '1.1.0', tools: '1.0.0' }),
        now: { ok: true, planDigest: planDigestOf({ nginx: '1.1.0', tools: '1.0.0' }), changes: [] },
      },
      {
        nodeId: 'n2',
        template: 'web',
        pinnedDigest: planDigestOf({ nginx: '1.0.0' }),
        now: {
          ok: true,
          planDigest: planDigestOf({ nginx: '1.1.0', tools: '1.0.0' }),
          changes: [
            { module: 'nginx', from: '1.0.0', to: '1.1.0' },
            { module: 'tools', from: null, to: '1.0.0' },
          ],
        },
      },
      // Its manual pin holds nginx where it is: the template plus the pins resolve to the plan it has.
      { nodeId: 'n3', template: 'web', pinnedDigest: planDigestOf({ nginx: '1.0.0', tools: '1.0.0' }), now: expect.objectContaining({ changes: [] }) },
    ]);
  });

  it('lists the conflicts by code when the template no longer resolves', async () => {
    const closures = await templateClosuresOf(
      [assigned('n1', { nginx: '1.1.0' }), { ...assigned('n2', { nginx: '1.1.0' }), template: 'gone' }],
      [template('web', [{ module: 'nginx', range: '^3' }])],
      catalogue,
    );
    expect(closures.map((c) => [c.nodeId, c.now])).toEqual([
      ['n1', { ok: false, conflicts: [{ code: 'RANGE_UNSATISFIABLE', subject: 'nginx' }] }],
      ['n2', { ok: false, conflicts: [{ code: 'TEMPLATE_UNKNOWN', subject: 'gone' }] }],
    ]);
  });

  it('names the reach limit as the conflict when a template grew past it since the host was assigned', async () => {
    // `web` includes t1, which includes t2, ... up to t<length - 1>: `length` templates reached.
    const chain = (length: number) => Array.from({ length }, (_, i) => template(i === 0 ? 'web' : `t${i}`, [], i < length - 1 ? [`t${i + 1}`] : []));
    const past = await templateClosuresOf([assigned('n1', {})], chain(TEMPLATE_INCLUDE_REACH_MAX + 1), catalogue);
    expect(past[0]!.now).toEqual({ ok: false, conflicts: [{ code: 'VALIDATION_FAILED', subject: 'web' }] });
    const at = await templateClosuresOf([assigned('n1', {})], chain(TEMPLATE_INCLUDE_REACH_MAX), catalogue);
    expect(at[0]!.now).toEqual({ ok: true, planDigest: planDigestOf({}), changes: [] });
  });

  it('reaches only the modules the template names, as the assignment decider does: an unnamed provider stays out', async () => {
    const templates = [template('web', [{ capability: 'http', range: '*' }])];
    const closures = await templateClosuresOf([assigned('n1', {})], templates, [manifest('nginx', '1.0.0', { provides: ['http'] })]);
    expect(closures[0]!.now).toEqual({ ok: false, conflicts: [{ code: 'CAPABILITY_MISSING', subject: 'http' }] });
  });
});
