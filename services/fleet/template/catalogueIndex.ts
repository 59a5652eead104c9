import semver from 'semver';
import type { PublishedModuleVersion } from '../../../schemas/fleet/closure.ts';

export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The published versions by module, highest first: the one ordering every choice of the resolver walks. A version
 * that is not semver is left out (publishing refuses it); a module@version given twice keeps the first in
 * code-point order of its JSON, so the order of the input never decides anything.
 */
export type CatalogueIndex = ReadonlyMap<string, readonly PublishedModuleVersion[]>;

export function indexCatalogue(catalogue: readonly PublishedModuleVersion[]): CatalogueIndex {
  const sorted = [...catalogue].filter((entry) => semver.valid(entry.version) !== null).sort((a, b) => byCodePoint(JSON.stringify(a), JSON.stringify(b)));
  const byModule = new Map<string, PublishedModuleVersion[]>();
  for (const entry of sorted) {
    const versions = byModule.get(entry.name) ?? [];
    if (!versions.some((v) => semver.eq(v.version, entry.version))) versions.push(entry);
    byModule.set(entry.name, versions);
  }
  for (const versions of byModule.values()) versions.sort((a, b) => semver.rcompare(a.version, b.version));
  return new Map([...byModule.entries()].sort(([a], [b]) => byCodePoint(a, b)));
}

/** Answers of `inRange` kept between calls, by range then version: the search asks the same pairs thousands of times. */
const inRangeMemo = new Map<string, Map<string, boolean>>();
const IN_RANGE_MEMO_RANGES_MAX = 4_096;

/** Whether the version is in the range; a range that does not parse admits nothing (and so shows as unsatisfiable). */
export function inRange(version: string, range: string): boolean {
  let byVersion = inRangeMemo.get(range);
  if (byVersion === undefined) {
    if (inRangeMemo.size >= IN_RANGE_MEMO_RANGES_MAX) inRangeMemo.clear();
    inRangeMemo.set(range, (byVersion = new Map<string, boolean>()));
  }
  let answer = byVersion.get(version);
  if (answer === undefined) {
    answer = semver.validRange(range) !== null && semver.satisfies(version, range);
    byVersion.set(version, answer);
  }
  return answer;
}

/** Providers by capability and range, per index (an index is never changed once built). */
const providersMemo = new WeakMap<CatalogueIndex, Map<string, readonly string[]>>();

/** The modules with a version that provides the capability within the range, in name order. */
export function providersOf(index: CatalogueIndex, capability: string, range: string): readonly string[] {
  let memo = providersMemo.get(index);
  if (memo === undefined) providersMemo.set(index, (memo = new Map<string, readonly string[]>()));
  const key = `${capability}\u0000${range}`;
  let names = memo.get(key);
  if (names === undefined) {
    names = [...index].filter(([, versions]) => versions.some((v) => provides(v, capability, range))).map(([name]) => name);
    memo.set(key, names);
  }
  return names;
}

export function provides(version: PublishedModuleVersion, capability: string, range: string): boolean {
  return version.provides.includes(capability) && inRange(version.version, range);
}
