import type { PublishedModuleVersion } from '../../../schemas/fleet/closure.ts';
import { byCodePoint, type CatalogueIndex, inRange, provides, providersOf } from './catalogueIndex.ts';
import { placeRequirements, type RootRequirement } from './closureNeeds.ts';

/**
 * Choices the search may try before it gives up; a closure that needs more is answered by settling instead. A real
 * template's closure takes one choice per module when nothing clashes; the budget bounds the thrashing of a refusal.
 */
export const SEARCH_BUDGET = 2_000;

export type Choices = ReadonlyMap<string, PublishedModuleVersion>;
export type SearchOutcome = { found: Choices } | { found: null; exhausted: boolean };

/**
 * The first consistent plan in one fixed order, backtracking when a choice leaves a requirement nothing can meet:
 * first the modules named by the template, the pins and the chosen versions' `requires`, by name, each highest
 * version first; then, for each capability no chosen version provides yet (by name), its providers by module name,
 * highest version first. So the plan is the highest one in that order, the same for any order of the inputs, and
 * the search is complete: it refuses only when no choice of versions and providers meets every requirement.
 */
export function searchClosure(index: CatalogueIndex, roots: readonly RootRequirement[]): SearchOutcome {
  let budget = SEARCH_BUDGET;
  const visit = (chosen: Map<string, PublishedModuleVersion>): Choices | null => {
    budget -= 1;
    if (budget < 0) return null;
    const { modules, capabilities } = placeRequirements(roots, chosen);
    for (const [module, version] of chosen) {
      if (!(modules.get(module) ?? []).every((c) => c.admits(version))) return null;
    }
    let branch: { module: string; candidates: PublishedModuleVersion[] }[] | null = null;
    for (const module of [...modules.keys()].sort(byCodePoint)) {
      if (chosen.has(module)) continue;
      const constraints = modules.get(module) ?? [];
      const candidates = (index.get(module) ?? []).filter((v) => constraints.every((c) => c.admits(v)));
      // Forward check: a needed module no version can satisfy now will not be rescued by choosing more.
      if (candidates.length === 0) return null;
      branch ??= [{ module, candidates }];
    }
    const providedBy = new Map<string, PublishedModuleVersion[]>();
    for (const version of chosen.values()) {
      for (const capability of version.provides) providedBy.set(capability, [...(providedBy.get(capability) ?? []), version]);
    }
    const checked = new Set<string>();
    for (const need of capabilities) {
      const key = `${need.capability}\u0000${need.range}`;
      if (checked.has(key)) continue;
      checked.add(key);
      if ((providedBy.get(need.capability) ?? []).some((v) => inRange(v.version, need.range))) continue;
      // An open capability: a provider not chosen yet, and not needed with requirements its providing versions break.
      const options = providersOf(index, need.capability, need.range)
        .filter((name) => !chosen.has(name))
        .map((name) => ({
          module: name,
          candidates: (index.get(name) ?? []).filter((v) => provides(v, need.capability, need.range) && (modules.get(name) ?? []).every((c) => c.admits(v))),
        }))
        .filter((option) => option.candidates.length > 0);
      if (options.length === 0) return null;
      branch ??= options;
    }
    if (branch === null) return chosen;
    for (const { module, candidates } of branch) {
      for (const candidate of candidates) {
        if (clashes(candidate, chosen.values())) continue;
        const found = visit(new Map([...chosen, [module, candidate]]));
        if (found !== null) return found;
        if (budget < 0) return null;
      }
    }
    return null;
  };
  const found = visit(new Map());
  return found === null ? { found: null, exhausted: budget < 0 } : { found };
}

/** Whether adding `candidate` to the chosen versions would let two of them hold a capability one claims alone. */
function clashes(candidate: PublishedModuleVersion, chosen: Iterable<PublishedModuleVersion>): boolean {
  const holds = (version: PublishedModuleVersion, capability: string): boolean =>
    version.provides.includes(capability) || version.exclusive.includes(capability);
  for (const other of chosen) {
    if (candidate.exclusive.some((capability) => holds(other, capability))) return true;
    if (other.exclusive.some((capability) => holds(candidate, capability))) return true;
  }
  return false;
}
