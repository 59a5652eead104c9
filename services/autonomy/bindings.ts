import { defineBinding, noRemediation as none, type Binding } from '../../plugins/sdk/defineBinding.ts';
import type { PolicyCatalog } from './policies.ts';
import type { Sensor } from './sensors/sensor.ts';

// Bindings are written against the SDK, as a plugin's are.
export { defineBinding, type Binding };

/** The first lanes' bindings. */
export const firstLaneBindings: readonly Binding[] = [
  defineBinding({ signal: 'bmc-unreachable', category: 'maintenance', plan: (s) => ({ action: 'metal.bmcMaintenance', target: s.target, params: {} }) }),
  // A retry runs the failed operation again: the plan names it, so approvers see what will run.
  defineBinding({
    signal: 'node-failed',
    category: 'retry',
    plan: (s) => ({ action: 'metal.retry', target: s.target, params: { operation: s.facts.operation ?? 'unknown' } }),
  }),
  defineBinding({ signal: 'step-overdue', category: 'observation', plan: none }),
  defineBinding({ signal: 'queue-stale', category: 'observation', plan: none }),
  defineBinding({ signal: 'instance-error', category: 'recreate', plan: (s) => ({ action: 'vps.recreate', target: s.target, params: {} }) }),
  // The plan names the node it leaves, so approvers see what moves from where; the new node is placement's choice.
  defineBinding({
    signal: 'instance-host-lost',
    category: 'relocate',
    plan: (s) => ({ action: 'vps.relocate', target: s.target, params: { siteId: s.facts.siteId ?? '', fromNodeId: s.facts.nodeId ?? '' } }),
  }),
  defineBinding({ signal: 'agent-key-old', category: 'rotate-key', plan: (s) => ({ action: 'agent.rotateKey', target: s.target, params: {} }) }),
  // Nothing the control plane can run makes an agent rotate: the owner is told.
  defineBinding({ signal: 'agent-key-rotation-stalled', category: 'observation', plan: none }),
  // Notify only: a tenant is root on its host and can silence its own agent at will; no silence may make the platform act on
  // the host. The instances of a metal pool placed on a silent host move (`instance-host-lost`): that acts on them, not on it.
  defineBinding({ signal: 'host-silent', category: 'observation', plan: none }),
  // Notify only for now: what a drifted, failing or unreported module needs (re-apply, roll back) is an operator's or a rollout's call.
  defineBinding({ signal: 'module-drift', category: 'module-health', plan: none }),
  defineBinding({ signal: 'module-verify-failed', category: 'module-health', plan: none }),
  defineBinding({ signal: 'module-never-reported', category: 'module-health', plan: none }),
  // A host lagging its template is brought up to it by a rollout or an explicit apply, both an operator's call.
  defineBinding({ signal: 'template-closure-drift', category: 'module-health', plan: none }),
];

/**
 * The start-up check: every binding's signal is emitted by some sensor and its category is declared, no signal is
 * bound twice and no sensor name is used twice. Returns the problems (empty: the set is coherent).
 */
export function checkBindings(bindings: readonly Binding[], sensors: readonly Sensor[], policies: PolicyCatalog): string[] {
  const emitted = new Set(sensors.flatMap((s) => s.emits));
  const problems: string[] = [];
  // Pass markers report sensors by name: two of one name (a plugin's and a built-in one) would hide a failure.
  const names = sensors.map((s) => s.name);
  for (const name of new Set(names.filter((n, i) => names.indexOf(n) !== i))) problems.push(`sensor "${name}" is defined twice`);
  const seen = new Set<string>();
  for (const b of bindings) {
    if (!emitted.has(b.signal)) problems.push(`binding of signal "${b.signal}": no sensor emits it`);
    if (!policies.has(b.category)) problems.push(`binding of signal "${b.signal}": category "${b.category}" is not declared`);
    if (seen.has(b.signal)) problems.push(`signal "${b.signal}" is bound twice`);
    seen.add(b.signal);
  }
  return problems;
}
