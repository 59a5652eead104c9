import type { ClosurePlan, PinDiff } from '../../../schemas/fleet/closure.ts';
import { byCodePoint } from './catalogueIndex.ts';

/** The dry run: what applying `plan` changes on a host that runs `current` (modules in code-point order). */
export function diffPins(current: ClosurePlan, plan: ClosurePlan): PinDiff {
  const diff: PinDiff = { added: [], removed: [], changed: [] };
  const modules = [...new Set([...Object.keys(current), ...Object.keys(plan)])].sort(byCodePoint);
  for (const module of modules) {
    // Own keys only: `constructor` is a valid module name and must not read the prototype.
    const from = Object.hasOwn(current, module) ? current[module] : undefined;
    const to = Object.hasOwn(plan, module) ? plan[module] : undefined;
    if (from === undefined && to !== undefined) diff.added.push({ module, to });
    else if (from !== undefined && to === undefined) diff.removed.push({ module, from });
    else if (from !== undefined && to !== undefined && from !== to) diff.changed.push({ module, from, to });
  }
  return diff;
}

/** Whether the dry run changes nothing. */
export function isEmptyDiff(diff: PinDiff): boolean {
  return diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0;
}
