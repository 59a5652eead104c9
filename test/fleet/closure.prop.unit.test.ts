import fc from 'fast-check';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import type { ClosurePlan, PublishedModuleVersion, TemplateSpec } from '../../schemas/fleet/closure.ts';
import { type ClosureInput, resolveClosure } from '../../services/fleet/template/closure.ts';
import { closureInput, MODULES, shuffledInput } from './closureArbitraries.ts';

const RUNS = { numRuns: 300 };

/** Checks a plan against its input with semver directly (not through the resolver's helpers): every rule holds. */
function violations(input: ClosureInput, plan: ClosurePlan): string[] {
  const found: string[] = [];
  const entry = (module: string): PublishedModuleVersion | undefined => input.catalogue.find((e) => e.name === module && e.version === plan[module]);
  const satisfied = (r: { module?: string; capability?: string; range: string }): boolean =>
    r.module !== undefined
      ? plan[r.module] !== undefined && semver.satisfies(plan[r.module]!, r.range)
      : Object.keys(plan).some((m) => entry(m)?.provides.includes(r.capability!) && semver.satisfies(plan[m]!, r.range));
  const reachable = new Set<string>();
  const walk = (name: string): void => {
    const spec = input.templates.find((t: TemplateSpec) => t.name === name);
    if (spec === undefined || reachable.has(name)) return;
    reachable.add(name);
    spec.includes.forEach(walk);
  };
  walk(input.template!);
  for (const t of input.templates.filter((t) => reachable.has(t.name))) {
    for (const r of t.requires) if (!satisfied(r)) found.push(`template ${t.name}: ${JSON.stringify(r)}`);
  }
  for (const pin of input.pins) if (plan[pin.module] !== pin.version) found.push(`pin ${pin.module}@${pin.version}`);
  for (const module of Object.keys(plan)) {
    const e = entry(module);
    if (e === undefined) {
      found.push(`unpublished ${module}@${plan[module]}`);
      continue;
    }
    for (const r of e.requires) if (!satisfied(r)) found.push(`${module}: ${JSON.stringify(r)}`);
    for (const capability of e.exclusive) {
      const others = Object.keys(plan).filter((m) => m !== module && (entry(m)?.provides.includes(capability) || entry(m)?.exclusive.includes(capability)));
      if (others.length > 0) found.push(`exclusive ${capability}: ${module} and ${others.join(',')}`);
    }
  }
  return found;
}

describe('closure resolver (properties)', () => {
  it('gives the same answer, plan or conflicts, whatever the order of its inputs', () => {
    fc.assert(
      fc.property(closureInput, fc.integer(), (input, seed) => {
        expect(resolveClosure(shuffledInput(input, seed))).toEqual(resolveClosure(input));
      }),
      RUNS,
    );
  });

  it('is idempotent: resolving again with the plan as the host pins gives the plan', () => {
    fc.assert(
      fc.property(closureInput, (input) => {
        const first = resolveClosure(input);
        fc.pre(first.ok);
        if (!first.ok) return;
        const pins = Object.entries(first.plan).map(([module, version]) => ({ module, version }));
        expect(resolveClosure({ ...input, pins })).toEqual(first);
      }),
      RUNS,
    );
  });

  it('returns only plans that keep every rule (template, pins, requires, exclusivity)', () => {
    fc.assert(
      fc.property(closureInput, (input) => {
        const result = resolveClosure(input);
        if (result.ok) expect(violations(input, result.plan)).toEqual([]);
      }),
      RUNS,
    );
  });

  it('refuses only when no plan exists: every refused catalogue has no consistent plan at all (brute force)', () => {
    fc.assert(
      fc.property(closureInput, (input) => {
        const result = resolveClosure(input);
        fc.pre(!result.ok);
        const options = MODULES.map((m) => [undefined, ...input.catalogue.filter((e) => e.name === m).map((e) => e.version)]);
        const plans = options.reduce<ClosurePlan[]>(
          (acc, versions, i) => acc.flatMap((plan) => versions.map((v) => (v === undefined ? plan : { ...plan, [MODULES[i]!]: v }))),
          [{}],
        );
        expect(plans.filter((plan) => violations(input, plan).length === 0)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('finds a plan often enough for the properties above to mean something', () => {
    const samples = fc.sample(closureInput, { numRuns: 300, seed: 35 });
    const planned = samples.filter((input) => resolveClosure(input).ok).length;
    expect(planned).toBeGreaterThan(30);
    expect(planned).toBeLessThan(290);
  });

  it('lists every planted conflict, whatever else the catalogue holds', () => {
    const plant = fc.record({
      range: fc.boolean(),
      exclusive: fc.boolean(),
      cycle: fc.boolean(),
      capability: fc.boolean(),
      unknown: fc.boolean(),
    });
    fc.assert(
      fc.property(closureInput, plant, fc.integer(), (input, planted, seed) => {
        const catalogue = [
          ...input.catalogue,
          { name: 'pinned', version: '1.0.0', provides: [], requires: [], exclusive: [] },
          { name: 'web-a', version: '1.0.0', provides: ['excl'], requires: [], exclusive: ['excl'] },
          { name: 'web-b', version: '1.0.0', provides: ['excl'], requires: [], exclusive: [] },
        ];
        const root = input.templates.find((t) => t.name === 't')!;
        const requires = [...root.requires];
        const includes = [...root.includes];
        if (planted.range) requires.push({ module: 'pinned', range: '>=99' });
        if (planted.exclusive) requires.push({ module: 'web-a', range: '*' }, { module: 'web-b', range: '^1' });
        if (planted.capability) requires.push({ capability: 'nowhere', range: '*' });
        if (planted.unknown) requires.push({ module: 'ghost', range: '*' });
        if (planted.cycle) includes.push('p');
        const templates = [
          ...input.templates.filter((t) => t.name !== 't'),
          { name: 't', requires, includes },
          { name: 'p', requires: [], includes: ['q'] },
          { name: 'q', requires: [], includes: ['p'] },
        ];
        const result = resolveClosure(shuffledInput({ ...input, catalogue, templates }, seed));
        const conflicts = result.ok ? [] : result.conflicts;
        const codes = conflicts.map((c) => c.code);
        expect(result.ok).toBe(!Object.values(planted).some(Boolean) && resolveClosure(input).ok);
        if (planted.range) {
          expect(conflicts).toContainEqual(
            expect.objectContaining({
              code: 'RANGE_UNSATISFIABLE',
              module: 'pinned',
              requirements: expect.arrayContaining([{ requirement: '>=99', from: 'template:t' }]),
            }),
          );
        }
        if (planted.exclusive) {
          expect(conflicts).toContainEqual({ code: 'EXCLUSIVE_CONFLICT', capability: 'excl', modules: ['web-a@1.0.0', 'web-b@1.0.0'] });
        }
        if (planted.cycle) expect(conflicts).toContainEqual({ code: 'TEMPLATE_CYCLE', cycle: ['p', 'q', 'p'] });
        if (planted.capability) expect(codes).toContain('CAPABILITY_MISSING');
        if (planted.unknown)
          expect(conflicts).toContainEqual({ code: 'MODULE_UNKNOWN', module: 'ghost', requirements: [{ requirement: '*', from: 'template:t' }] });
      }),
      RUNS,
    );
  });
});
