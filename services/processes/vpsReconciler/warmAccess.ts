import type { InstanceSpec } from '../../../schemas/agent/hostInstances.ts';
import type { Effect } from '../../platform/processManager/processManager.ts';
import type { ConvergeTask } from './effects.ts';
import { candidatesAt, sendHostCommand, type MetalAccess } from './metalAccess.ts';
import type { VpsModel } from './model.ts';
import { planWarmPool } from './warmKeeper.ts';

/**
 * The warm pools' steps (`warmKeeper.ts` plans): `warm` plans a pool's pass with the site's nodes as the read model
 * has them; `prepareSlot` sends a slot's node its `instance.apply` (`warm`, `stopped`, no user data: disk and bundle
 * ready, never started); `removeSlot` its `instance.remove`.
 */
export async function performWarm(
  task: ConvergeTask,
  model: VpsModel,
  access: MetalAccess,
  resendMs: number,
  now = Date.now(),
): Promise<readonly Effect<ConvergeTask>[]> {
  if (task.step === 'warm' && task.poolId !== undefined) return planWarmPool(task.poolId, model, now, resendMs, (siteId) => candidatesAt(access, siteId));
  if (task.step === 'prepareSlot' && task.slotId !== undefined) {
    const slot = model.warm.slots.get(task.slotId);
    if (!slot) return [];
    const { vcpus, memoryMib, diskGib } = slot.resources;
    const spec: InstanceSpec = {
      id: slot.slotId,
      runtime: slot.runtime,
      flavor: { name: slot.flavorId, vcpus, memoryMiB: memoryMib, diskGiB: diskGib },
      image: { ref: slot.image },
      desiredState: 'stopped',
      warm: true,
    };
    await sendHostCommand(access, slot, 'apply', spec, slot.slotId, `warm-${slot.poolId}`, now);
    return [];
  }
  if (task.step === 'removeSlot' && task.slotId !== undefined && task.nodeId !== undefined) {
    const removal = model.warm.removals.get(`${task.nodeId}/${task.slotId}`);
    if (!removal) return [];
    await sendHostCommand(access, removal, 'remove', { id: removal.slotId }, removal.slotId, `warm-${removal.slotId}`, now);
  }
  return [];
}

export const isWarmStep = (task: ConvergeTask): boolean => task.step === 'warm' || task.step === 'prepareSlot' || task.step === 'removeSlot';
