/**
 * Hetzner Cloud's label selectors (docs.hetzner.cloud, "Label Selector"): comma-separated expressions that must all
 * hold: `k=v` / `k==v` (equal), `k!=v` (not equal), `k` (present), `!k` (absent), `k in (v1,v2)`, `k notin (v1,v2)`.
 */
type Expression = (labels: Record<string, string>) => boolean;

function parseOne(text: string): Expression {
  const expression = text.trim();
  const set = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(expression);
  if (set) {
    const [, key = '', op, list = ''] = set;
    const values = list.split(',').map((v) => v.trim());
    return (labels) => (op === 'in') === (key in labels && values.includes(labels[key] ?? ''));
  }
  const notEqual = /^([^\s!=]+)\s*!=\s*(\S*)$/.exec(expression);
  if (notEqual) return (labels) => labels[notEqual[1] ?? ''] !== notEqual[2];
  const equal = /^([^\s!=]+)\s*==?\s*(\S*)$/.exec(expression);
  if (equal) return (labels) => labels[equal[1] ?? ''] === equal[2];
  const absent = /^!([^\s!=]+)$/.exec(expression);
  if (absent) return (labels) => !((absent[1] ?? '') in labels);
  if (/^[^\s!=(),]+$/.test(expression)) return (labels) => expression in labels;
  throw new Error(`invalid label selector expression ${JSON.stringify(expression)}`);
}

/** Splits on the commas between expressions, not those inside `in (...)`. */
export function parseLabelSelector(selector: string): Expression {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of selector) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  const expressions = parts.filter((p) => p.trim() !== '').map(parseOne);
  return (labels) => expressions.every((matches) => matches(labels));
}
