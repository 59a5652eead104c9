import { describe, expect, it } from 'vitest';
import type { PublishedModuleVersion, TemplateSpec } from '../../schemas/fleet/closure.ts';
import { resolveClosure, resolveHostPlans } from '../../services/fleet/template/closure.ts';
import { diffPins, isEmptyDiff } from '../../services/fleet/template/pinDiff.ts';

const v = (name: string, version: string, extra: Partial<PublishedModuleVersion> = {}): PublishedModuleVersion => ({
  name,
  version,
  provides: [],
  requires: [],
  exclusive: [],
  ...extra,
});

const catalogue = [
  v('openssl', '1.1.1'),
  v('openssl', '3.0.2'),
  v('openssl', '3.2.0'),
  v('nginx', '1.24.0', { provides: ['http'], exclusive: ['http'], requires: [{ module: 'openssl', range: '^3' }] }),
  v('nginx', '1.26.1', { provides: ['http'], exclusive: ['http'], requires: [{ module: 'openssl', range: '>=3.2' }] }),
  v('caddy', '2.7.0', { provides: ['http'] }),
  v('node-exporter', '1.8.0', { provides: ['metrics'], requires: [{ capability: 'http', range: '*' }] }),
];
const web: TemplateSpec = { name: 'web', requires: [{ module: 'nginx', range: '^1.24' }], includes: ['base'] };
const base: TemplateSpec = { name: 'base', requires: [{ capability: 'metrics', range: '*' }], includes: [] };

describe('closure resolver (examples)', () => {
  it('takes the highest versions that satisfy every range, through requires and capabilities', () => {
    const result = resolveClosure({ template: 'web', templates: [web, base], pins: [], catalogue });
    expect(result).toEqual({ ok: true, plan: { nginx: '1.26.1', 'node-exporter': '1.8.0', openssl: '3.2.0' } });
  });

  it('backtracks: a pin below what the highest nginx needs takes the nginx that accepts it', () => {
    const result = resolveClosure({ template: 'web', templates: [web, base], pins: [{ module: 'openssl', version: '3.0.2' }], catalogue });
    expect(result).toEqual({ ok: true, plan: { nginx: '1.24.0', 'node-exporter': '1.8.0', openssl: '3.0.2' } });
  });

  it('RANGE_UNSATISFIABLE names every requirement on the module and who placed it', () => {
    const result = resolveClosure({ template: 'web', templates: [web, base], pins: [{ module: 'openssl', version: '1.1.1' }], catalogue });
    expect(result).toEqual({
      ok: false,
      conflicts: [
        {
          code: 'RANGE_UNSATISFIABLE',
          module: 'openssl',
          requirements: [
            { requirement: '=1.1.1', from: 'pin' },
            { requirement: '>=3.2', from: 'module:nginx@1.26.1' },
          ],
        },
      ],
    });
  });

  it('EXCLUSIVE_CONFLICT: two providers of a capability one claims alone', () => {
    const both: TemplateSpec = {
      name: 'both',
      requires: [
        { module: 'nginx', range: '*' },
        { module: 'caddy', range: '*' },
      ],
      includes: [],
    };
    const result = resolveClosure({ template: 'both', templates: [both], pins: [], catalogue });
    expect(result).toEqual({ ok: false, conflicts: [{ code: 'EXCLUSIVE_CONFLICT', capability: 'http', modules: ['caddy@2.7.0', 'nginx@1.26.1'] }] });
  });

  it('lists every conflict at once: a cycle, an unknown template, an unknown module, a missing capability', () => {
    const loop: TemplateSpec[] = [
      {
        name: 'a',
        requires: [
          { module: 'ghost', range: '^1' },
          { capability: 'dns', range: '*' },
        ],
        includes: ['b', 'nowhere'],
      },
      { name: 'b', requires: [], includes: ['c'] },
      { name: 'c', requires: [], includes: ['b'] },
    ];
    const result = resolveClosure({ template: 'a', templates: loop, pins: [], catalogue });
    expect(result.ok ? [] : result.conflicts).toEqual([
      { code: 'CAPABILITY_MISSING', capability: 'dns', requirements: [{ requirement: 'provides dns *', from: 'template:a' }] },
      { code: 'MODULE_UNKNOWN', module: 'ghost', requirements: [{ requirement: '^1', from: 'template:a' }] },
      { code: 'TEMPLATE_CYCLE', cycle: ['b', 'c', 'b'] },
      { code: 'TEMPLATE_UNKNOWN', template: 'nowhere', from: 'template:a' },
    ]);
  });

  it('refuses a template cycle even when the modules resolve', () => {
    const self: TemplateSpec = { name: 'self', requires: [{ module: 'openssl', range: '*' }], includes: ['self'] };
    expect(resolveClosure({ template: 'self', templates: [self], pins: [], catalogue })).toEqual({
      ok: false,
      conflicts: [{ code: 'TEMPLATE_CYCLE', cycle: ['self', 'self'] }],
    });
  });

  it('plans every host under one template, each with its own pins', () => {
    const plans = resolveHostPlans({
      template: 'web',
      templates: [web, base],
      catalogue,
      hosts: [
        { host: 'h2', pins: [{ module: 'openssl', version: '3.0.2' }] },
        { host: 'h1', pins: [] },
      ],
    });
    expect(Object.keys(plans)).toEqual(['h1', 'h2']);
    expect(plans.h1).toEqual({ ok: true, plan: { nginx: '1.26.1', 'node-exporter': '1.8.0', openssl: '3.2.0' } });
    expect(plans.h2).toMatchObject({ ok: true, plan: { nginx: '1.24.0' } });
  });
});

describe('pin diff (the dry run)', () => {
  it('says what is added, removed and changed, from and to, in module order', () => {
    const diff = diffPins({ openssl: '3.0.2', nginx: '1.24.0', caddy: '2.7.0' }, { openssl: '3.2.0', nginx: '1.24.0', 'node-exporter': '1.8.0' });
    expect(diff).toEqual({
      added: [{ module: 'node-exporter', to: '1.8.0' }],
      removed: [{ module: 'caddy', from: '2.7.0' }],
      changed: [{ module: 'openssl', from: '3.0.2', to: '3.2.0' }],
    });
    expect(isEmptyDiff(diff)).toBe(false);
    expect(isEmptyDiff(diffPins({ a: '1.0.0' }, { a: '1.0.0' }))).toBe(true);
    expect(diffPins({}, { constructor: '1.0.0' })).toEqual({ added: [{ module: 'constructor', to: '1.0.0' }], removed: [], changed: [] });
  });
});
