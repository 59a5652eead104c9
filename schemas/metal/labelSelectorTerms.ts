import { LabelKey, LabelSelector, LabelValue, type LabelRequirement } from './nodeLabels.ts';

/** How many `?label=` terms one list takes: a selector's own limit on expressions. */
const MAX_TERMS = 32;

/**
 * The node list's `?label=` terms as a selector: `key=value` (the label has that value) or `key` (the node carries the
 * label, any value). Every term must hold; a parameter given several times, or terms separated by commas (which no
 * key or value may hold), are AND-ed. A malformed term is a problem in words, never a selector that matches nothing.
 */
export function selectorOfTerms(parameters: readonly string[]): { selector: LabelSelector } | { problem: string } {
  const terms = parameters.flatMap((p) => p.split(','));
  if (terms.length > MAX_TERMS) return { problem: `at most ${MAX_TERMS} label terms` };
  const expressions: LabelRequirement[] = [];
  for (const term of terms) {
    const equals = term.indexOf('=');
    const key = equals < 0 ? term : term.slice(0, equals);
    if (!LabelKey.safeParse(key).success) return { problem: `label term "${term}": "${key}" is not a label key` };
    if (equals < 0) {
      expressions.push({ key, operator: 'Exists' });
      continue;
    }
    const value = term.slice(equals + 1);
    if (!LabelValue.safeParse(value).success) return { problem: `label term "${term}": "${value}" is not a label value` };
    expressions.push({ key, operator: 'In', values: [value] });
  }
  return { selector: LabelSelector.parse({ matchExpressions: expressions }) };
}
