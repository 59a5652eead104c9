import type { ClosureConflict, ModuleRequirement, TemplateSpec } from '../../../schemas/fleet/closure.ts';

/** A template's requirement with the template that placed it. */
export interface PlacedTemplateRequirement {
  requirement: ModuleRequirement;
  from: string;
}

export interface TemplateExpansion {
  requirements: PlacedTemplateRequirement[];
  conflicts: ClosureConflict[];
}

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A template and every template it includes, depth first in name order: their requirements, and each include cycle
 * (every back edge of that walk, so a template that closes two loops reports both) and each unknown template.
 * A cycle does not stop the walk: the other conflicts of the same template are listed with it.
 */
export function expandTemplate(root: string, templates: readonly TemplateSpec[]): TemplateExpansion {
  const byName = new Map<string, TemplateSpec>();
  // The catalogue keeps one spec per name; if a caller passes two, the first in code-point order of its JSON wins, so
  // the order the caller passed them in never matters.
  for (const spec of [...templates].sort((a, b) => byCodePoint(JSON.stringify(a), JSON.stringify(b)))) {
    if (!byName.has(spec.name)) byName.set(spec.name, spec);
  }
  const requirements: PlacedTemplateRequirement[] = [];
  const conflicts: ClosureConflict[] = [];
  const done = new Set<string>();
  const onPath: string[] = [];

  const visit = (name: string, from: string): void => {
    const spec = byName.get(name);
    if (spec === undefined) {
      conflicts.push({ code: 'TEMPLATE_UNKNOWN', template: name, from });
      return;
    }
    const at = onPath.indexOf(name);
    if (at >= 0) {
      conflicts.push({ code: 'TEMPLATE_CYCLE', cycle: canonicalCycle(onPath.slice(at)) });
      return;
    }
    if (done.has(name)) return;
    onPath.push(name);
    for (const requirement of spec.requires) requirements.push({ requirement, from: `template:${name}` });
    for (const included of [...new Set(spec.includes)].sort(byCodePoint)) visit(included, `template:${name}`);
    onPath.pop();
    done.add(name);
  };
  visit(root, 'assignment');
  return { requirements, conflicts };
}

/** The cycle rotated to start at its smallest name, closed by that name again: one spelling per cycle. */
function canonicalCycle(members: string[]): string[] {
  let start = 0;
  for (let i = 1; i < members.length; i += 1) if (byCodePoint(members[i]!, members[start]!) < 0) start = i;
  const rotated = [...members.slice(start), ...members.slice(0, start)];
  return [...rotated, rotated[0]!];
}
