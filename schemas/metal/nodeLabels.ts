import { z } from 'zod';

/**
 * Node labels, Kubernetes-shaped so operators read them without a manual: a key is an optional DNS-subdomain prefix
 * and `/`, then a name of at most 63 characters; a value is at most 63 characters (or empty). The `bc.dev/` prefix is
 * the control plane's own: those labels are derived (site, CPU cores, memory, drivers a daemon advertises) and an
 * operator cannot set or remove them.
 */
const NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^(?=.{1,253}$)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

export const DERIVED_LABEL_PREFIX = 'bc.dev/';

export const LabelKey = z.string().refine((key) => {
  const slash = key.lastIndexOf('/');
  return slash < 0 ? NAME.test(key) : PREFIX.test(key.slice(0, slash)) && NAME.test(key.slice(slash + 1));
}, 'a label key is [prefix/]name: name up to 63 of letters, digits, "-", "_", "." starting and ending alphanumeric; prefix a DNS subdomain');

export const LabelValue = z
  .string()
  .refine((v) => v === '' || NAME.test(v), 'a label value is up to 63 of letters, digits, "-", "_", "." starting and ending alphanumeric');

export const NodeLabels = z.record(LabelKey, LabelValue).refine((labels) => Object.keys(labels).length <= 64, 'at most 64 labels');
export type NodeLabels = Readonly<Record<string, string>>;

export const LabelRequirement = z.discriminatedUnion('operator', [
  z.strictObject({ key: LabelKey, operator: z.enum(['In', 'NotIn']), values: z.array(LabelValue).min(1).max(32) }),
  z.strictObject({ key: LabelKey, operator: z.enum(['Exists', 'DoesNotExist']) }),
]);
export type LabelRequirement = z.infer<typeof LabelRequirement>;

/** Every requirement must hold (`matchLabels` are `In` with one value). */
export const LabelSelector = z.strictObject({
  matchLabels: z.record(LabelKey, LabelValue).optional(),
  matchExpressions: z.array(LabelRequirement).max(32).optional(),
});
export type LabelSelector = z.infer<typeof LabelSelector>;

export function matchesSelector(labels: NodeLabels, selector: LabelSelector): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const requirement of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, requirement.key);
    switch (requirement.operator) {
      case 'In':
        if (!has || !requirement.values.includes(labels[requirement.key]!)) return false;
        break;
      case 'NotIn':
        if (has && requirement.values.includes(labels[requirement.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** The label a daemon's advertised driver puts on its node: `bc.dev/driver.<id>` = its version. */
export const driverLabelKey = (driverId: string): string => `${DERIVED_LABEL_PREFIX}driver.${driverId}`;

/** A label value made of anything (a version such as `1.2.3+deb12`): characters a value cannot hold become `_`. */
function asLabelValue(text: string): string {
  const value = text
    .replace(/[^-A-Za-z0-9_.]/g, '_')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return value;
}

/** Whether the key is the control plane's own (`bc.dev/…`): derived, never set or removed by an operator. */
export const isDerivedLabelKey = (key: string): boolean => key.startsWith(DERIVED_LABEL_PREFIX);

/** What the control plane derives a node's labels from: its site, its recorded inventory, its daemon's drivers. */
export interface DerivedLabelSource {
  readonly siteId: string;
  readonly cpus?: number | null;
  readonly memoryMib?: number | null;
  readonly drivers?: readonly { readonly id: string; readonly version: string; readonly features?: readonly string[] }[];
}

/** The label a runtime declaring warm starts puts on its node (`bc.dev/warm-start.<id>` = `true`): warm slots go there only. */
export const warmStartLabelKey = (driverId: string): string => `${DERIVED_LABEL_PREFIX}warm-start.${driverId}`;

/** The labels the control plane derives for a node: where it is, what it has, and the drivers its daemon runs. */
export function derivedNodeLabels(node: DerivedLabelSource): Record<string, string> {
  const labels: Record<string, string> = { [`${DERIVED_LABEL_PREFIX}site`]: asLabelValue(node.siteId) };
  if (node.cpus != null) labels[`${DERIVED_LABEL_PREFIX}cpu.cores`] = String(node.cpus);
  if (node.memoryMib != null) labels[`${DERIVED_LABEL_PREFIX}memory.mib`] = String(node.memoryMib);
  for (const driver of node.drivers ?? []) {
    labels[driverLabelKey(driver.id)] = asLabelValue(driver.version);
    if (driver.features?.includes('warm-start')) labels[warmStartLabelKey(driver.id)] = 'true';
  }
  return labels;
}

/**
 * A node's labels as everything reads them (views, selectors, placement): the operator's, then the derived ones on
 * top. An operator label under `bc.dev/` (one a decider never lets through, but a log is read as written) is dropped,
 * so what the control plane derives is never overridden.
 */
export function effectiveNodeLabels(operatorLabels: NodeLabels, source: DerivedLabelSource): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const key of Object.keys(operatorLabels).sort()) if (!isDerivedLabelKey(key)) labels[key] = operatorLabels[key]!;
  return { ...labels, ...derivedNodeLabels(source) };
}
