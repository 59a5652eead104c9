import { instanceRemediationPlan, remediationPlan, type RemediationPlan } from '../../schemas/autonomy/plan.ts';
import type { Signal } from '../../schemas/autonomy/signals.ts';

/**
 * A signal kind bound to an intervention category, and how the remediation plan is resolved from the signal. The
 * plan is what approvers approve (its digest) and exactly what runs. Plugins list theirs in `definePlugin({ bindings })`;
 * the autonomy engine refuses to start when a binding's signal is emitted by no sensor or its category is declared
 * nowhere (built in, or a plugin's `policies`).
 */
export interface Binding {
  readonly signal: string;
  readonly category: string;
  plan(signal: Signal): RemediationPlan;
}

export const defineBinding = (binding: Binding): Binding => Object.freeze(binding);

/**
 * A plan that runs `profile` (built in or a plugin's) on the signal's target and returns it to where it was: on a node
 * as `metal.remediate`, on a VPS instance (a signal whose target is an `instance`) as `vps.remediateInstance`, which
 * runs only profiles whose steps all run on the control plane.
 */
export const remediateWith =
  (profile: string) =>
  (signal: Signal): RemediationPlan =>
    signal.target.type === 'instance' ? instanceRemediationPlan(signal.target.id, profile) : remediationPlan(signal.target.id, profile);

/** A plan that only tells (for `notify` categories). */
export const noRemediation = (signal: Signal): RemediationPlan => ({ action: 'none', target: signal.target, params: {} });
