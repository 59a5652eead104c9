import type { ModuleRequirement, PublishedModuleVersion } from '../../../schemas/fleet/closure.ts';
import { byCodePoint, type CatalogueIndex, inRange, provides, providersOf } from './catalogueIndex.ts';

/** A requirement on one module: a test of a version, how it reads, and who placed it. */
export interface Constraint {
  admits: (version: PublishedModuleVersion) => boolean;
  requirement: string;
  from: string;
}

export interface CapabilityNeed {
  capability: string;
  range: string;
  from: string;
}

export interface Needs {
  modules: Map<string, Constraint[]>;
  missing: CapabilityNeed[];
}

/** A requirement the template or a pin places, with who placed it. */
export interface RootRequirement {
  requirement: ModuleRequirement;
  from: string;
}

/** The module requirements and capability needs the roots and the chosen versions place (capabilities sorted). */
export function placeRequirements(
  roots: readonly RootRequirement[],
  chosen: ReadonlyMap<string, PublishedModuleVersion | null>,
): { modules: Map<string, Constraint[]>; capabilities: CapabilityNeed[] } {
  const modules = new Map<string, Constraint[]>();
  const capabilities: CapabilityNeed[] = [];
  const place = (requirement: ModuleRequirement, from: string): void => {
    if (requirement.module !== undefined) {
      const { range } = requirement;
      addConstraint(modules, requirement.module, { admits: (v) => inRange(v.version, range), requirement: range, from });
    } else if (requirement.capability !== undefined) {
      capabilities.push({ capability: requirement.capability, range: requirement.range, from });
    }
  };
  for (const root of roots) place(root.requirement, root.from);
  for (const [module, version] of [...chosen.entries()].sort(([a], [b]) => byCodePoint(a, b))) {
    if (version === null) continue;
    for (const requirement of version.requires) place(requirement, `module:${module}@${version.version}`);
  }
  capabilities.sort((a, b) => byCodePoint(`${a.capability} ${a.range} ${a.from}`, `${b.capability} ${b.range} ${b.from}`));
  return { modules, capabilities };
}

/**
 * The requirements on each module given the current choices, for settling: the placed requirements and one provider
 * for each needed capability (`chooseProvider`). The search chooses providers itself instead (`searchClosure`).
 */
export function collectNeeds(index: CatalogueIndex, roots: readonly RootRequirement[], chosen: ReadonlyMap<string, PublishedModuleVersion | null>): Needs {
  const { modules, capabilities } = placeRequirements(roots, chosen);
  const missing: CapabilityNeed[] = [];
  capabilities.sort((a, b) => byCodePoint(`${a.capability} ${a.range} ${a.from}`, `${b.capability} ${b.range} ${b.from}`));
  for (const need of capabilities) {
    const candidates = providersOf(index, need.capability, need.range);
    if (candidates.length === 0) {
      missing.push(need);
      continue;
    }
    const provider = chooseProvider(index, need, candidates, modules, chosen);
    addConstraint(modules, provider, {
      admits: (v) => provides(v, need.capability, need.range),
      requirement: `provides ${need.capability} ${need.range}`,
      from: need.from,
    });
  }
  return { modules, missing };
}

/**
 * Who provides a needed capability, by name within each rule: a module whose chosen version already does; else a
 * module needed anyway that has a version doing it within the requirements on it; else a module not needed yet; else
 * the first (whose requirements then show as unsatisfiable). A template that cares which provider names the module.
 */
function chooseProvider(
  index: CatalogueIndex,
  need: CapabilityNeed,
  candidates: readonly string[],
  modules: ReadonlyMap<string, readonly Constraint[]>,
  chosen: ReadonlyMap<string, PublishedModuleVersion | null>,
): string {
  const servesNow = candidates.find((name) => {
    const version = chosen.get(name);
    return version != null && provides(version, need.capability, need.range);
  });
  if (servesNow !== undefined) return servesNow;
  const needed = (name: string): boolean => modules.has(name) || chosen.has(name);
  const canServe = candidates.find(
    (name) =>
      needed(name) && (index.get(name) ?? []).some((v) => provides(v, need.capability, need.range) && (modules.get(name) ?? []).every((c) => c.admits(v))),
  );
  return canServe ?? candidates.find((name) => !needed(name)) ?? candidates[0]!;
}

function addConstraint(modules: Map<string, Constraint[]>, module: string, constraint: Constraint): void {
  const constraints = modules.get(module) ?? [];
  if (!constraints.some((c) => c.requirement === constraint.requirement && c.from === constraint.from)) constraints.push(constraint);
  modules.set(module, constraints);
}
