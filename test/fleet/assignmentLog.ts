import type { AssignmentState } from '../../schemas/fleet/assignmentState.ts';
import type { PublishedModuleVersion, TemplateSpec } from '../../schemas/fleet/closure.ts';
import type { ModuleManifest } from '../../schemas/fleet/moduleManifest.ts';
import type { ModuleState } from '../../schemas/fleet/modules.ts';
import type { TemplateState } from '../../schemas/fleet/templateState.ts';
import type { NodeState } from '../../schemas/metal/nodeState.ts';
import type { AggregateLoader } from '../../services/platform/commands/commandDefinition.ts';

/** A log as the assignment deciders read it: nodes by state, templates, modules' published versions, assignments. */
export interface FakeLog {
  nodes?: Record<string, NodeState>;
  templates?: readonly TemplateSpec[];
  catalogue?: readonly PublishedModuleVersion[];
  assignments?: Record<string, AssignmentState>;
  /** Before each load answers: how many event-loop turns to wait (another order of arrival). */
  delay?: (type: string, id: string) => number;
}

/** A published version's state entry, its manifest carrying what the resolver reads. */
const published = (v: PublishedModuleVersion) => ({
  version: v.version,
  bundleSha256: '0'.repeat(64),
  manifestSha256: '1'.repeat(64),
  publisherId: 'acme',
  manifest: { ...v, requires: v.requires as ModuleManifest['requires'], rebootRequired: false, probes: [], files: [] },
});

export function loaderOf(log: FakeLog): AggregateLoader {
  return (async (aggregate: { type: string }, id: string) => {
    for (let i = log.delay?.(aggregate.type, id) ?? 0; i > 0; i -= 1) await new Promise((resolve) => setImmediate(resolve));
    switch (aggregate.type) {
      case 'node': {
        const state = log.nodes?.[id];
        return state === undefined ? { exists: false } : { exists: true, nodeId: id, siteId: 'site-1', state };
      }
      case 'template': {
        const spec = log.templates?.find((t) => t.name === id);
        return (spec ? { exists: true, templateId: id, requires: spec.requires, includes: spec.includes } : { exists: false }) satisfies TemplateState;
      }
      case 'module':
        return { versions: (log.catalogue ?? []).filter((v) => v.name === id).map(published) } satisfies ModuleState;
      case 'assignment':
        return log.assignments?.[id] ?? ({ exists: false } satisfies AssignmentState);
      default:
        throw new Error(`the fake log has no ${aggregate.type}`);
    }
  }) as AggregateLoader;
}
