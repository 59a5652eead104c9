import { randomUUID } from 'node:crypto';
import type { ObservedInstanceState } from '../../../schemas/vps/instanceCommands.ts';
import { idFor } from '../../../schemas/ids.ts';
import type { EngineCommand } from '../../platform/processManager/processManager.ts';
import type { ReconciledInstance } from './model.ts';

/** What the reconciler may record about an instance besides its state. */
export interface Observation {
  readonly providerInstanceId?: string;
  readonly addresses?: readonly string[];
  readonly message?: string;
}

/**
 * A step of a converge pass over one instance (by its key): `plan` decides on the model as it is when the pass runs
 * (`planPass`, `planMetalPass`), `probe` does the provider work outside the log (`probe`), `place`, `apply` and
 * `remove` the metal pool's (`metalAccess.ts`). A pass of the periodic resync is only a poll,
 * asked for at `polledAt` (ms since the epoch): it has nothing to do if, by the time it runs, the instance is at rest or
 * a pass queued before it has asked the provider since.
 */
export interface ConvergeTask {
  readonly converge: string;
  /**
   * Metal pools: `place` sends `vps.placeInstance` with the site's nodes; `apply`/`remove` send the host its agent
   * command; `relocate` sends `vps.relocateInstance` with the site's nodes; `removeCopy` sends `instance.remove` to
   * `nodeId`, a node the instance was moved off that lists it again. Warm pools (`warmKeeper.ts`, `converge` is then
   * `warm:<poolId>` or `slot:<nodeId>/<slotId>`): `warm` keeps the pool's slots, `prepareSlot` sends `slotId`'s node
   * its `instance.apply`, `removeSlot` its `instance.remove`.
   */
  readonly step: 'plan' | 'probe' | 'place' | 'apply' | 'remove' | 'relocate' | 'removeCopy' | 'warm' | 'prepareSlot' | 'removeSlot';
  readonly polledAt?: number;
  /** `removeCopy`, `removeSlot`: the node whose copy or slot goes. */
  readonly nodeId?: string;
  /** `warm`: the pool kept. */
  readonly poolId?: string;
  /** `prepareSlot`, `removeSlot`: the slot. */
  readonly slotId?: string;
}

export type ReconcilerCommand = EngineCommand<ConvergeTask>;

/**
 * The engine commands the reconciler sends, as data for the process-manager host. Each is safe to repeat: the quota
 * release has an id derived from the instance; a report that changes nothing is a no-op of the decider.
 */
export function observe(instance: ReconciledInstance, observed: ObservedInstanceState, observation: Observation = {}, commandId?: string): ReconcilerCommand {
  const { tenantId, instanceId } = instance;
  const payload = { instanceId, tenantId, observed, ...observation, ...(observation.addresses ? { addresses: [...observation.addresses] } : {}) };
  // A fresh id per report unless the caller derives one: the same state may be reported again later (running →
  // stopped → running), and the decider makes a repeated report that changes nothing a no-op anyway.
  return { kind: 'command', name: 'vps.recordInstanceObserved', payload, commandId: commandId ?? `observe-${randomUUID()}` };
}

export const releaseQuota = ({ tenantId, instanceId, key }: ReconciledInstance): ReconcilerCommand => ({
  kind: 'command',
  name: 'vps.releaseQuota',
  payload: { tenantId, instanceId },
  commandId: idFor('quota-release', key),
});
