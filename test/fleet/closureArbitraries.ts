import fc from 'fast-check';
import type { ModulePin, ModuleRequirement, PublishedModuleVersion, TemplateSpec } from '../../schemas/fleet/closure.ts';
import type { ClosureInput } from '../../services/fleet/template/closure.ts';

/** Small pools, so generated catalogues are dense: requirements meet, ranges overlap and clash, providers compete. */
export const MODULES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'] as const;
export const CAPABILITIES = ['http', 'db', 'log', 'dns'] as const;
export const VERSIONS = ['1.0.0', '1.1.0', '1.2.3', '2.0.0', '2.1.0', '3.0.0'] as const;
export const RANGES = ['*', '>=1.0.0', '^1', '^2', '>=1.1.0', '<2', '~1.1', '^3', '>=2.0.0 <3'] as const;

/** Half the ranges admit everything, so closures are satisfiable often enough; the rest narrow, overlap and clash. */
const range: fc.Arbitrary<string> = fc.oneof({ weight: 1, arbitrary: fc.constant('*') }, { weight: 1, arbitrary: fc.constantFrom(...RANGES) });

const requirement: fc.Arbitrary<ModuleRequirement> = fc.oneof(
  fc.record({ module: fc.constantFrom(...MODULES), range }),
  fc.record({ capability: fc.constantFrom(...CAPABILITIES), range }),
);

const moduleVersion = (name: string): fc.Arbitrary<PublishedModuleVersion> =>
  fc
    .record({
      version: fc.constantFrom(...VERSIONS),
      provides: fc.uniqueArray(fc.constantFrom(...CAPABILITIES), { minLength: 1, maxLength: 2 }),
      requires: fc.array(requirement, { maxLength: 1 }),
      exclusiveWanted: fc.double({ min: 0, max: 1, noNaN: true }).map((x) => x < 0.1),
    })
    .map(({ version, provides, requires, exclusiveWanted }) => ({
      name,
      version,
      provides,
      // A module never requires itself (a manifest that does is refused at publishing).
      requires: requires.filter((r) => r.module !== name),
      exclusive: exclusiveWanted ? provides.slice(0, 1) : [],
    }));

/** A catalogue with each module@version once (publishing refuses a duplicate version). */
export const catalogue: fc.Arbitrary<PublishedModuleVersion[]> = fc
  .tuple(...MODULES.map((name) => fc.array(moduleVersion(name), { minLength: 1, maxLength: 4 })))
  .map((perModule) => perModule.flat())
  .map((entries) => [...new Map(entries.map((e) => [`${e.name}@${e.version}`, e])).values()]);

/** A root template `t` that may include `u` and `v` (no cycles: the cycle is planted on purpose elsewhere). */
export const templates: fc.Arbitrary<TemplateSpec[]> = fc
  .record({
    t: fc.array(requirement, { minLength: 1, maxLength: 3 }),
    u: fc.array(requirement, { maxLength: 2 }),
    v: fc.array(requirement, { maxLength: 2 }),
    includes: fc.uniqueArray(fc.constantFrom('u', 'v'), { maxLength: 2 }),
  })
  .map(({ t, u, v, includes }) => [
    { name: 't', requires: t, includes },
    { name: 'u', requires: u, includes: [] },
    { name: 'v', requires: v, includes: ['u'] },
  ]);

/** Up to two pins: mostly a published module@version, sometimes one nothing publishes. */
const pinsFor = (entries: readonly PublishedModuleVersion[]): fc.Arbitrary<ModulePin[]> =>
  fc.uniqueArray(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...entries).map((e) => ({ module: e.name, version: e.version })) },
      { weight: 1, arbitrary: fc.record({ module: fc.constantFrom(...MODULES), version: fc.constantFrom(...VERSIONS) }) },
    ),
    { maxLength: 2, selector: (p) => p.module },
  );

export const closureInput: fc.Arbitrary<ClosureInput> = catalogue.chain((entries) =>
  fc.record({ templates, pins: pinsFor(entries) }).map(({ templates: specs, pins }) => ({ template: 't', templates: specs, pins, catalogue: entries })),
);

/** A seeded shuffle (mulberry32), so a failing case replays from fast-check's seed. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The same input with every list in another order: the catalogue, the templates, the pins and each entry's lists. */
export function shuffledInput(input: ClosureInput, seed: number): ClosureInput {
  return {
    template: input.template,
    templates: shuffled(input.templates, seed).map((t, i) => ({
      ...t,
      requires: shuffled(t.requires, seed + i + 1),
      includes: shuffled(t.includes, seed + i + 2),
    })),
    pins: shuffled(input.pins, seed + 3),
    catalogue: shuffled(input.catalogue, seed + 4).map((e, i) => ({
      ...e,
      provides: shuffled(e.provides, seed + 5 + i),
      requires: shuffled(e.requires, seed + 6 + i),
      exclusive: shuffled(e.exclusive, seed + 7 + i),
    })),
  };
}
