import type { ClosurePlan, ClosureResult, ModulePin, PinDiff } from '../../../schemas/fleet/closure.ts';
import { byCodePoint } from './catalogueIndex.ts';
import { type ClosureInput, resolveClosure } from './closure.ts';
import { diffPins } from './pinDiff.ts';

export interface HostNow {
  host: string;
  /** What the host is pinned to now. */
  current: ClosurePlan;
  /** Its manual assignments. */
  pins: readonly ModulePin[];
}

export type HostDryRun = { host: string; result: ClosureResult; diff: PinDiff | null };

/**
 * The dry run of assigning (or re-resolving) a template: per host, in host order, the plan or every conflict, and what
 * applying the plan would change on it (null when there is no plan). Nothing is written: hosts change only through
 * a rollout or an explicit apply.
 */
export function dryRunAssignment(input: Omit<ClosureInput, 'pins'> & { hosts: readonly HostNow[] }): HostDryRun[] {
  return [...input.hosts]
    .sort((a, b) => byCodePoint(a.host, b.host))
    .map(({ host, current, pins }) => {
      const result = resolveClosure({ template: input.template, templates: input.templates, catalogue: input.catalogue, pins });
      return { host, result, diff: result.ok ? diffPins(current, result.plan) : null };
    });
}
