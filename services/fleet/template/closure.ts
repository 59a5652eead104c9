import type {
  ClosureConflict,
  ClosurePlan,
  ClosureResult,
  ModulePin,
  PlacedRequirement,
  PublishedModuleVersion,
  TemplateSpec,
} from '../../../schemas/fleet/closure.ts';
import { byCodePoint, type CatalogueIndex, indexCatalogue } from './catalogueIndex.ts';
import { type CapabilityNeed, collectNeeds, type Constraint, type Needs, type RootRequirement } from './closureNeeds.ts';
import { searchClosure } from './closureSearch.ts';
import { expandTemplate } from './templateExpansion.ts';

export interface ClosureInput {
  /** The host's template (absent: the host runs its pins only). */
  template?: string | undefined;
  templates: readonly TemplateSpec[];
  /** Manual assignments on the host: each an exact version, on top of the template. */
  pins: readonly ModulePin[];
  catalogue: readonly PublishedModuleVersion[];
}

/** Rounds of re-choosing before the resolver gives up with CLOSURE_UNSTABLE (each round walks every needed module). */
const MAX_ROUNDS = 64;

/**
 * The pinned plan of one host, or every conflict. Pure and deterministic: every walk is in code-point order of names
 * and highest-version-first, so shuffled inputs give the same answer.
 *
 * The plan is the first consistent one in a fixed order (named modules by name, versions highest first, then the
 * providers of capabilities still open; with backtracking: `searchClosure`). When there is none, the conflicts are those of the settled highest choice: each
 * needed module gets the highest version that satisfies every requirement on it now (the template's, the pins', those
 * of the versions chosen for the other modules), re-read after every change until nothing changes; what is still
 * unmet then is listed, all of it, not only the first. A plan is returned only when no conflict remains (an include
 * cycle or an unknown template refuses even a satisfiable closure), and resolving again with the plan as the host's
 * pins gives the same plan.
 */
export function resolveClosure(input: ClosureInput): ClosureResult {
  const index = indexCatalogue(input.catalogue);
  const expansion = input.template === undefined ? { requirements: [], conflicts: [] } : expandTemplate(input.template, input.templates);
  const roots: RootRequirement[] = [
    ...expansion.requirements,
    ...input.pins.map((pin) => ({ requirement: { module: pin.module, range: `=${pin.version}` }, from: 'pin' })),
  ];
  const search = searchClosure(index, roots);
  const settled = search.found === null ? settleHighest(index, roots) : null;
  // Settling meets everything only where the search gave up on its budget: its choice is a plan as well.
  const choices = search.found ?? (settled?.conflicts.length === 0 ? settled.chosen : null);
  const conflicts = [...expansion.conflicts, ...(settled?.conflicts ?? [])];
  if (choices !== null && conflicts.length === 0) {
    const plan: ClosurePlan = {};
    for (const [module, version] of [...choices.entries()].sort(([a], [b]) => byCodePoint(a, b))) {
      if (version !== null) plan[module] = version.version;
    }
    return { ok: true, plan };
  }
  return { ok: false, conflicts: canonicalConflicts(conflicts) };
}

/** The settled highest choice and what it leaves unmet (see `resolveClosure`). */
function settleHighest(
  index: CatalogueIndex,
  roots: readonly RootRequirement[],
): { chosen: ReadonlyMap<string, PublishedModuleVersion | null>; conflicts: ClosureConflict[] } {
  const chosen = new Map<string, PublishedModuleVersion | null>();
  let settled = false;
  let rounds = 0;
  while (!settled && rounds < MAX_ROUNDS) {
    rounds += 1;
    settled = true;
    let needs = collectNeeds(index, roots, chosen);
    for (const module of [...needs.modules.keys()].sort(byCodePoint)) {
      const constraints = needs.modules.get(module);
      if (constraints === undefined) continue;
      const pick = index.get(module)?.find((v) => constraints.every((c) => c.admits(v))) ?? null;
      const before = chosen.get(module);
      if (before === undefined || before?.version !== pick?.version) {
        chosen.set(module, pick);
        settled = false;
        needs = collectNeeds(index, roots, chosen);
      }
    }
    for (const module of [...chosen.keys()]) {
      if (!needs.modules.has(module)) {
        chosen.delete(module);
        settled = false;
      }
    }
  }
  const conflicts = conflictsOf(index, collectNeeds(index, roots, chosen), chosen);
  // Choices that kept undoing each other are the explanation only when nothing else is unmet at the last round.
  if (!settled && conflicts.length === 0) conflicts.push({ code: 'CLOSURE_UNSTABLE', rounds });
  return { chosen, conflicts };
}

/** Every host's plan under one template: hosts differ only by their pins. */
export function resolveHostPlans(
  input: Omit<ClosureInput, 'pins'> & { hosts: readonly { host: string; pins: readonly ModulePin[] }[] },
): Record<string, ClosureResult> {
  const plans: Record<string, ClosureResult> = {};
  for (const { host, pins } of [...input.hosts].sort((a, b) => byCodePoint(a.host, b.host))) {
    plans[host] = resolveClosure({ ...input, pins });
  }
  return plans;
}

function conflictsOf(index: CatalogueIndex, needs: Needs, chosen: ReadonlyMap<string, PublishedModuleVersion | null>): ClosureConflict[] {
  const conflicts: ClosureConflict[] = [];
  for (const [module, constraints] of needs.modules) {
    const requirements = placed(constraints);
    if (!index.has(module)) conflicts.push({ code: 'MODULE_UNKNOWN', module, requirements });
    else if (!(chosen.get(module) ?? null)) conflicts.push({ code: 'RANGE_UNSATISFIABLE', module, requirements });
  }
  const missingByCapability = new Map<string, CapabilityNeed[]>();
  for (const need of needs.missing) missingByCapability.set(need.capability, [...(missingByCapability.get(need.capability) ?? []), need]);
  for (const [capability, missing] of missingByCapability) {
    const requirements = missing.map((need) => ({ requirement: `provides ${capability} ${need.range}`, from: need.from }));
    conflicts.push({ code: 'CAPABILITY_MISSING', capability, requirements });
  }
  const versions = [...chosen.values()].filter((v): v is PublishedModuleVersion => v !== null);
  const claimed = new Set(versions.flatMap((v) => v.exclusive));
  for (const capability of claimed) {
    const holders = versions.filter((v) => v.provides.includes(capability) || v.exclusive.includes(capability));
    if (holders.length > 1) {
      conflicts.push({ code: 'EXCLUSIVE_CONFLICT', capability, modules: holders.map((v) => `${v.name}@${v.version}`) });
    }
  }
  return conflicts;
}

function placed(constraints: readonly Constraint[]): PlacedRequirement[] {
  return constraints.map(({ requirement, from }) => ({ requirement, from }));
}

/** Conflicts sorted (code, then content) with their lists sorted, duplicates dropped: one spelling per answer. */
function canonicalConflicts(conflicts: readonly ClosureConflict[]): ClosureConflict[] {
  const sortPlaced = (list: PlacedRequirement[]): PlacedRequirement[] =>
    [...list].sort((a, b) => byCodePoint(`${a.requirement}\u0000${a.from}`, `${b.requirement}\u0000${b.from}`));
  const normalised = conflicts.map((conflict): ClosureConflict => {
    switch (conflict.code) {
      case 'MODULE_UNKNOWN':
      case 'RANGE_UNSATISFIABLE':
      case 'CAPABILITY_MISSING':
        return { ...conflict, requirements: sortPlaced(conflict.requirements) };
      case 'EXCLUSIVE_CONFLICT':
        return { ...conflict, modules: [...conflict.modules].sort(byCodePoint) };
      default:
        return conflict;
    }
  });
  const unique = new Map(normalised.map((c) => [JSON.stringify(c), c]));
  return [...unique.entries()].sort(([a], [b]) => byCodePoint(a, b)).map(([, c]) => c);
}
