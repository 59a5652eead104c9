import type { SnapshotClosureConflict, SnapshotTemplateClosure } from '../../../schemas/autonomy/snapshot.ts';
import type { ClosureConflict, ClosureResult } from '../../../schemas/fleet/closure.ts';
import type { ModuleManifest } from '../../../schemas/fleet/moduleManifest.ts';
import type { TemplateView } from '../../../schemas/fleet/views.ts';
import type { TemplateAssignment } from '../../../projections/modules/queries.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { type AssignmentTarget, catalogueSource, closureVersionOf, reachClosure } from '../../fleet/assignment/closureInputs.ts';
import { planDigestOf, resolveHostPlan, sortedPins } from '../../fleet/assignment/hostPlan.ts';
import { diffPins } from '../../fleet/template/pinDiff.ts';

/** What a conflict names, for a signal's facts: its module, capability, template or cycle. */
function subjectOf(conflict: ClosureConflict): string {
  switch (conflict.code) {
    case 'TEMPLATE_CYCLE':
      return conflict.cycle.join('>');
    case 'TEMPLATE_UNKNOWN':
      return conflict.template;
    case 'MODULE_UNKNOWN':
    case 'RANGE_UNSATISFIABLE':
      return conflict.module;
    case 'CAPABILITY_MISSING':
    case 'EXCLUSIVE_CONFLICT':
      return conflict.capability;
    case 'CLOSURE_UNSTABLE':
      return `${conflict.rounds} rounds`;
  }
}

/**
 * Every template-assigned host's template and pins resolved again over the `modules` read model (templates and
 * published versions read once, each host reaching only what its template and pins name, as the assignment decider
 * does), against the plan it is pinned to: the input of the `template-closure-drift` sensor.
 */
export async function templateClosuresOf(
  assignments: readonly TemplateAssignment[],
  templates: readonly TemplateView[],
  manifests: readonly ModuleManifest[],
): Promise<SnapshotTemplateClosure[]> {
  const source = catalogueSource(
    templates.map((t) => ({ name: t.templateId, requires: t.requires, includes: t.includes })),
    manifests.map(closureVersionOf),
  );
  // Hosts differ only by template and pins: most of a fleet shares a few, each resolved once per pass.
  const resolved = new Map<string, ClosureResult | DomainError>();
  const resolve = async (target: AssignmentTarget): Promise<ClosureResult | DomainError> => {
    const key = JSON.stringify([target.template, sortedPins(target.pins)]);
    const known = resolved.get(key);
    if (known) return known;
    let result: ClosureResult | DomainError;
    try {
      result = resolveHostPlan(target, await reachClosure(target, source));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      result = error;
    }
    resolved.set(key, result);
    return result;
  };
  const out: SnapshotTemplateClosure[] = [];
  for (const a of assignments) {
    const base = { nodeId: a.nodeId, template: a.template, pinnedDigest: a.planDigest };
    const result = await resolve({ template: a.template, pins: a.pins });
    if (result instanceof DomainError) {
      // A template grown past the reach limit since the host was assigned: the decider would refuse it the same way.
      out.push({ ...base, now: { ok: false, conflicts: [{ code: result.code, subject: a.template }] } });
      continue;
    }
    if (!result.ok) {
      const conflicts: SnapshotClosureConflict[] = result.conflicts.map((c) => ({ code: c.code, subject: subjectOf(c) }));
      out.push({ ...base, now: { ok: false, conflicts } });
      continue;
    }
    const diff = diffPins(a.plan, result.plan);
    const changes = [
      ...diff.added.map((c) => ({ module: c.module, from: null, to: c.to })),
      ...diff.removed.map((c) => ({ module: c.module, from: c.from, to: null })),
      ...diff.changed.map((c) => ({ module: c.module, from: c.from, to: c.to })),
    ].sort((x, y) => (x.module < y.module ? -1 : x.module > y.module ? 1 : 0));
    out.push({ ...base, now: { ok: true, planDigest: planDigestOf(result.plan), changes } });
  }
  return out;
}
