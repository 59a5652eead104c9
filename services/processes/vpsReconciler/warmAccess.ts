import { getNode } from '../../../projections/nodes/queries.ts';
import type { InstanceSpec } from '../../../schemas/agent/hostInstances.ts';
import { instanceKeepingStates } from '../../../schemas/metal/nodeState.ts';
import type { Effect } from '../../platform/processManager/processManager.ts';
import type { ReconcilerConfig } from './config.ts';
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
  config: Pick<ReconcilerConfig, 'hostResendMs' | 'hostSilentMs'>,
  now = Date.now(),
): Promise<readonly Effect<ConvergeTask>[]> {
  if (task.step === 'warm' && task.poolId !== undefined) {
    const world = { candidates: (siteId: string) => candidatesAt(access, siteId), nodeLost: lostNodes(access, model, config.hostSilentMs, now) };
    return planWarmPool(task.poolId, model, now, config.hostResendMs, world);
  }
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

/**
 * Whether a slot's node is lost, as the nodes read model and this process's heartbeats show it: in a state where a host
 * keeps nothing that ran on it (failed, released, wiped, retired), or deployed with its `bcd node` silent past
 * `hostSilentMs`, counted from the latest of its last report, this process's start and the node's last change (as the
 * `host-silent` sensor counts it). A node the read model does not show is not judged. One read per node per pass.
 */
function lostNodes(access: MetalAccess, model: VpsModel, hostSilentMs: number, now: number): (nodeId: string) => boolean {
  const judged = new Map<string, boolean>();
  return (nodeId) => {
    const known = judged.get(nodeId);
    if (known !== undefined) return known;
    const view = access.nodes && getNode(access.nodes.db(), nodeId);
    const lost =
      view !== undefined &&
      (!instanceKeepingStates.has(view.state) ||
        (view.state === 'deployed' && Math.min(model.hosts.silentForMs(nodeId, now), now - Date.parse(view.updatedAt)) > hostSilentMs));
    judged.set(nodeId, lost);
    return lost;
  };
}

export const isWarmStep = (task: ConvergeTask): boolean => task.step === 'warm' || task.step === 'prepareSlot' || task.step === 'removeSlot';
