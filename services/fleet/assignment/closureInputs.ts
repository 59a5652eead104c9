import { ASSIGNMENT_MODULE_REACH_MAX } from '../../../schemas/fleet/assignmentCommands.ts';
import type { ModulePin, PublishedModuleVersion, TemplateSpec } from '../../../schemas/fleet/closure.ts';
import type { ModuleManifest } from '../../../schemas/fleet/moduleManifest.ts';
import { TEMPLATE_INCLUDE_REACH_MAX } from '../../../schemas/fleet/templateCommands.ts';
import { nodeRef, type NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import type { AggregateLoader } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { moduleAggregate } from '../module/module.ts';
import { templateAggregate } from '../template/template.ts';

/** What a host's plan is resolved from. */
export interface AssignmentTarget {
  template: string | null;
  pins: readonly ModulePin[];
}

/** What resolving a host's plan reads of the log: the node, the templates its template reaches, the published versions. */
export interface ClosureInputs {
  /** What they were loaded for: the template and the modules pinned (a decision on another target reads them again). */
  loadedFor: { template: string | null; pinned: string[] };
  node: NodeAggregateState;
  templates: TemplateSpec[];
  catalogue: PublishedModuleVersion[];
}

/** What the closure resolver reads of a published version: the manifest's fields of the same names. */
export const closureVersionOf = (manifest: ModuleManifest): PublishedModuleVersion => ({
  name: manifest.name,
  version: manifest.version,
  provides: [...manifest.provides],
  requires: manifest.requires.map((r) => ({ ...r })),
  exclusive: [...manifest.exclusive],
});

/**
 * Loads a host's closure inputs, level by level: the template and every template its includes reach (at most
 * TEMPLATE_INCLUDE_REACH_MAX), then the modules they, the pins and the loaded versions' `requires` name, transitively
 * (at most ASSIGNMENT_MODULE_REACH_MAX). A capability is provided only by a module reached so: a template that needs a
 * capability names the module that provides it (docs/modules.md). Both the decider and the dry run read through this,
 * from the log (`fresh`), not a cached state: a version published a moment ago is in the plan, as in the dry run before.
 */
export async function loadClosureInputs(nodeId: string, target: AssignmentTarget, load: AggregateLoader): Promise<ClosureInputs> {
  const node = await load(nodeRef, nodeId, { fresh: true });
  const { templates, catalogue } = await reachClosure(target, logSource(load));
  return { loadedFor: loadedFor(target), node, templates, catalogue };
}

/** The part of a target that decides what is loaded: the template and the names of the pinned modules. */
export const loadedFor = (target: AssignmentTarget): ClosureInputs['loadedFor'] => ({
  template: target.template,
  pinned: [...new Set(target.pins.map((p) => p.module))].sort(),
});

/** Where the closure's templates and published versions are read from: the log (the decider) or a read model (a sensor). */
export interface ClosureSource {
  /** The templates of these names that exist. */
  templates: (names: readonly string[]) => Promise<TemplateSpec[]> | TemplateSpec[];
  /** Every published version of these modules. */
  versions: (names: readonly string[]) => Promise<PublishedModuleVersion[]> | PublishedModuleVersion[];
}

/** The templates and versions a target reaches through `source` (see `loadClosureInputs`): one walk for every reader. */
export async function reachClosure(target: AssignmentTarget, source: ClosureSource): Promise<Pick<ClosureInputs, 'templates' | 'catalogue'>> {
  const templates = await reachLevels(
    target.template === null ? [] : [target.template],
    source.templates,
    (t) => t.includes,
    TEMPLATE_INCLUDE_REACH_MAX,
    () => {
      return new DomainError('VALIDATION_FAILED', `template ${target.template} reaches more than ${TEMPLATE_INCLUDE_REACH_MAX} templates`);
    },
  );
  const roots = [...templates.flatMap((t) => t.requires.flatMap((r) => (r.module === undefined ? [] : [r.module]))), ...target.pins.map((p) => p.module)];
  const catalogue = await reachLevels(
    roots,
    source.versions,
    (v) => v.requires.flatMap((r) => (r.module === undefined ? [] : [r.module])),
    ASSIGNMENT_MODULE_REACH_MAX,
    () => new DomainError('VALIDATION_FAILED', `the closure names more than ${ASSIGNMENT_MODULE_REACH_MAX} modules`),
  );
  return { templates, catalogue };
}

/** Names walked level by level from `roots`, each fetched once, refusing past `max` names. */
async function reachLevels<T>(
  roots: readonly string[],
  fetch: (names: readonly string[]) => Promise<T[]> | T[],
  next: (item: T) => readonly string[],
  max: number,
  tooMany: () => DomainError,
): Promise<T[]> {
  const reached: T[] = [];
  const seen = new Set<string>();
  let level = [...roots];
  while (level.length > 0) {
    const fresh = [...new Set(level)].filter((name) => !seen.has(name));
    for (const name of fresh) seen.add(name);
    if (seen.size > max) throw tooMany();
    const items = fresh.length > 0 ? await fetch(fresh) : [];
    reached.push(...items);
    level = items.flatMap(next);
  }
  return reached;
}

/** The log as a closure source: every aggregate read fresh, so a version published a moment ago is in the plan. */
const logSource = (load: AggregateLoader): ClosureSource => ({
  async templates(names) {
    const states = await Promise.all(names.map((name) => load(templateAggregate, name, { fresh: true })));
    return states.filter((s) => s.exists).map((s) => ({ name: s.templateId, requires: [...s.requires], includes: [...s.includes] }));
  },
  async versions(names) {
    const states = await Promise.all(names.map((name) => load(moduleAggregate, name, { fresh: true })));
    return states.flatMap((s) => s.versions.map((published) => closureVersionOf(published.manifest)));
  },
});

/** Templates and published versions held in memory (a read model's, read once for many hosts) as a closure source. */
export function catalogueSource(templates: readonly TemplateSpec[], versions: readonly PublishedModuleVersion[]): ClosureSource {
  const templatesByName = new Map(templates.map((t) => [t.name, t]));
  const versionsByModule = new Map<string, PublishedModuleVersion[]>();
  for (const v of versions) versionsByModule.set(v.name, [...(versionsByModule.get(v.name) ?? []), v]);
  return {
    templates: (names) => names.flatMap((name) => templatesByName.get(name) ?? []),
    versions: (names) => names.flatMap((name) => versionsByModule.get(name) ?? []),
  };
}
