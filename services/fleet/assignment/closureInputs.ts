import { ASSIGNMENT_MODULE_REACH_MAX } from '../../../schemas/fleet/assignmentCommands.ts';
import type { ModulePin, PublishedModuleVersion, TemplateSpec } from '../../../schemas/fleet/closure.ts';
import type { ModuleManifest } from '../../../schemas/fleet/moduleManifest.ts';
import { TEMPLATE_INCLUDE_REACH_MAX } from '../../../schemas/fleet/templateCommands.ts';
import { nodeRef, type NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import type { AggregateLoader } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
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
  const templates = await reachTemplates(target.template, load);
  const roots = [...templates.flatMap((t) => t.requires.flatMap((r) => (r.module === undefined ? [] : [r.module]))), ...target.pins.map((p) => p.module)];
  const catalogue = await reachModules(roots, load);
  return { loadedFor: loadedFor(target), node, templates, catalogue };
}

/** The part of a target that decides what is loaded: the template and the names of the pinned modules. */
export const loadedFor = (target: AssignmentTarget): ClosureInputs['loadedFor'] => ({
  template: target.template,
  pinned: [...new Set(target.pins.map((p) => p.module))].sort(),
});

async function reachTemplates(template: string | null, load: AggregateLoader): Promise<TemplateSpec[]> {
  const specs: TemplateSpec[] = [];
  const seen = new Set<string>();
  let level = template === null ? [] : [template];
  while (level.length > 0) {
    const fresh = [...new Set(level)].filter((name) => !seen.has(name));
    for (const name of fresh) seen.add(name);
    if (seen.size > TEMPLATE_INCLUDE_REACH_MAX) {
      throw new DomainError('VALIDATION_FAILED', `template ${template} reaches more than ${TEMPLATE_INCLUDE_REACH_MAX} templates`);
    }
    const states = await Promise.all(fresh.map((name) => load(templateAggregate, name, { fresh: true })));
    level = [];
    for (const state of states) {
      if (!state.exists) continue;
      specs.push({ name: state.templateId, requires: [...state.requires], includes: [...state.includes] });
      level.push(...state.includes);
    }
  }
  return specs;
}

async function reachModules(roots: readonly string[], load: AggregateLoader): Promise<PublishedModuleVersion[]> {
  const catalogue: PublishedModuleVersion[] = [];
  const seen = new Set<string>();
  let level = [...roots];
  while (level.length > 0) {
    const fresh = [...new Set(level)].filter((name) => !seen.has(name));
    for (const name of fresh) seen.add(name);
    if (seen.size > ASSIGNMENT_MODULE_REACH_MAX) {
      throw new DomainError('VALIDATION_FAILED', `the closure names more than ${ASSIGNMENT_MODULE_REACH_MAX} modules`);
    }
    const states = await Promise.all(fresh.map((name) => load(moduleAggregate, name, { fresh: true })));
    level = [];
    for (const state of states) {
      for (const published of state.versions) {
        const version = closureVersionOf(published.manifest);
        catalogue.push(version);
        level.push(...version.requires.flatMap((r) => (r.module === undefined ? [] : [r.module])));
      }
    }
  }
  return catalogue;
}
