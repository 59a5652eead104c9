import { aggregateRef } from '../aggregateRef.ts';
import type { DesiredInstanceState, ObservedInstanceState } from './instanceCommands.ts';
import type { RemediableInstanceState } from './instanceRemediation.ts';

/** The remediation running on the instance: its workflow and the state the instance returns to. */
export interface InstanceRemediation {
  readonly workflowId: string;
  readonly profile: string;
  readonly returnTo: RemediableInstanceState;
}

/** Why the instance needs attention: the remediation that failed on it. */
export interface InstanceAttention {
  readonly workflowId: string;
  readonly reason: string;
  readonly failedStep: string | null;
}

/**
 * An instance's desired and observed state. What it was created with lives in the tenant's `InstanceRequested`; the
 * desired state is `running` from then on until a tenant says otherwise.
 */
export interface InstanceState {
  /** The tenant whose events this subject carries: set by its first event, so another tenant's reuse of the id is refused. */
  readonly tenantId: string | null;
  readonly desired: DesiredInstanceState;
  readonly observed: ObservedInstanceState | null;
  readonly providerInstanceId: string | null;
  readonly addresses: readonly string[];
  readonly message: string | null;
  /** The remediation in flight, if any (absent on states folded before remediations existed: none). */
  readonly remediation?: InstanceRemediation | null;
  /** Set when a remediation failed; cleared when someone starts, stops, deletes or remediates the instance. */
  readonly attention?: InstanceAttention | null;
}

/** Whether another tenant's events are on this instance's subject. */
export const heldByAnother = (state: InstanceState, tenantId: string): boolean => state.tenantId !== null && state.tenantId !== tenantId;

/** What another aggregate may read of an instance (`bc.evt.vps.instance.<instanceId>`). */
export const instanceRef = aggregateRef<InstanceState>('vps', 'instance');
