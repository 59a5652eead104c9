import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../schemas/canonicalJson.ts';
import type { AssignmentEvent } from '../../../schemas/fleet/assignmentEvents.ts';
import type { AssignmentState } from '../../../schemas/fleet/assignmentState.ts';
import type { ClosureConflict, ClosurePlan, ClosureResult, ModulePin } from '../../../schemas/fleet/closure.ts';
import type { NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import { DomainError, type Issue } from '../../../schemas/platformError.ts';
import { byCodePoint } from '../template/catalogueIndex.ts';
import { resolveClosure } from '../template/closure.ts';
import { type AssignmentTarget, type ClosureInputs, loadedFor } from './closureInputs.ts';

/** sha256 (hex) of the plan's canonical JSON: two hosts with the same plan have the same digest. */
export const planDigestOf = (plan: ClosurePlan): string => createHash('sha256').update(canonicalJson(plan)).digest('hex');

/** Pins in module order: one spelling of a host's pins, whatever order they were given in. */
export const sortedPins = (pins: readonly ModulePin[]): ModulePin[] =>
  [...pins].map((p) => ({ module: p.module, version: p.version })).sort((a, b) => byCodePoint(a.module, b.module));

/**
 * A plan may be assigned to any node the fleet still has, ahead of its deploy (it takes effect when the host runs
 * `bcd node`); a node that is unknown, retiring or retired gets none.
 */
export function requireAssignableNode(nodeId: string, node: NodeAggregateState): void {
  if (!node.exists) throw new DomainError('NOT_FOUND', `node ${nodeId} is not enrolled`);
  if (node.state === 'retired' || node.state === 'retiring') {
    throw new DomainError('ILLEGAL_TRANSITION', `node ${nodeId} is ${node.state}: a plan is assigned only to a node the fleet keeps`);
  }
}

/** The host's plan for `target`, or every conflict (pure: the same inputs in any order give the same answer). */
export function resolveHostPlan(target: AssignmentTarget, inputs: Pick<ClosureInputs, 'templates' | 'catalogue'>): ClosureResult {
  return resolveClosure({ template: target.template ?? undefined, templates: inputs.templates, pins: target.pins, catalogue: inputs.catalogue });
}

/**
 * The decision shared by `fleet.assignTemplate`, `fleet.pinModule` and `fleet.unpinModule`: resolve the host's plan
 * and record it, refuse with CLOSURE_CONFLICT and every conflict in `issues`, or append nothing when the template,
 * the pins and the plan are what the host has already.
 */
export function decideHostPlan(nodeId: string, target: AssignmentTarget, state: AssignmentState, inputs: ClosureInputs): AssignmentEvent[] {
  requireAssignableNode(nodeId, inputs.node);
  if (canonicalJson(loadedFor(target)) !== canonicalJson(inputs.loadedFor)) {
    // The assignment changed between the read of the inputs and the decision: the kernel reads them again, once.
    throw new DomainError('CONCURRENCY_CONFLICT', `the assignment of node ${nodeId} changed while its plan was resolved; send the command again`);
  }
  const result = resolveHostPlan(target, inputs);
  if (!result.ok) {
    const issues = result.conflicts.map(issueOf);
    throw new DomainError('CLOSURE_CONFLICT', `node ${nodeId}: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, { issues });
  }
  const pins = sortedPins(target.pins);
  const planDigest = planDigestOf(result.plan);
  if (state.exists && state.template === target.template && canonicalJson(state.pins) === canonicalJson(pins) && state.planDigest === planDigest) {
    return [];
  }
  return [{ type: 'HostPlanAssigned', data: { nodeId, template: target.template, pins, plan: result.plan, planDigest } }];
}

/** One conflict as a problem's issue: `path` is its code, `message` what it names. */
export function issueOf(conflict: ClosureConflict): Issue {
  const placed = (rs: readonly { requirement: string; from: string }[]) => rs.map((r) => `${r.requirement} (from ${r.from})`).join(', ');
  switch (conflict.code) {
    case 'TEMPLATE_CYCLE':
      return { path: conflict.code, message: conflict.cycle.join(' -> ') };
    case 'TEMPLATE_UNKNOWN':
      return { path: conflict.code, message: `${conflict.template} (from ${conflict.from})` };
    case 'MODULE_UNKNOWN':
    case 'RANGE_UNSATISFIABLE':
      return { path: conflict.code, message: `${conflict.module}: ${placed(conflict.requirements)}` };
    case 'CAPABILITY_MISSING':
      return { path: conflict.code, message: `${conflict.capability}: ${placed(conflict.requirements)}` };
    case 'EXCLUSIVE_CONFLICT':
      return { path: conflict.code, message: `${conflict.capability}: ${conflict.modules.join(', ')}` };
    case 'CLOSURE_UNSTABLE':
      return { path: conflict.code, message: `no plan settled within ${conflict.rounds} rounds` };
  }
}
