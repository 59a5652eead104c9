import { isDeepStrictEqual } from 'node:util';
import { driverLabelKey } from '../../../schemas/metal/nodeLabels.ts';
import type { HoldBookState } from '../../../schemas/vps/holdState.ts';
import type { HoldCandidate } from '../../../schemas/vps/holdCommands.ts';
import type { InstanceReservation } from '../../../schemas/vps/tenantState.ts';
import type { WarmSlot } from '../../../schemas/vps/warmPool.ts';
import { allocatedByNode, lessFloored, NOTHING, plus } from '../placement/bookSnapshot.ts';

/**
 * The ready slot a create takes, if any: of its pool, flavor, image, runtime and size, on a node still schedulable with
 * the runtime's driver; the longest ready first, then by slot id, so the same book gives the same slot. With it, what
 * `InstancePlaced` records: the node, its free capacity counting the slot's as the instance's, how many slots could
 * have been taken.
 */
export function takeWarmSlot(state: HoldBookState, reservation: InstanceReservation, runtime: string, candidates: readonly HoldCandidate[]) {
  const size = { vcpus: reservation.resources.vcpus, memoryMib: reservation.resources.memoryMib, diskGib: reservation.resources.diskGib };
  const usable = (slot: WarmSlot) => {
    const node = candidates.find((c) => c.nodeId === slot.nodeId);
    return node?.schedulable === true && !node.agentless && node.labels[driverLabelKey(runtime)] !== undefined;
  };
  const takeable = Object.values(state.warmSlots ?? {})
    .filter((s) => s.readyAt !== null && s.poolId === reservation.poolId && s.flavorId === reservation.flavorId && s.image === reservation.image)
    .filter((s) => s.runtime === runtime && isDeepStrictEqual(s.resources, size) && usable(s))
    .sort((a, b) => a.readyAt!.localeCompare(b.readyAt!) || a.slotId.localeCompare(b.slotId));
  const slot = takeable[0];
  if (!slot) return undefined;
  const node = candidates.find((c) => c.nodeId === slot.nodeId)!;
  // The slot's capacity is already counted taken on its node: it becomes the instance's.
  const freeBefore = plus(lessFloored(node.capacity, allocatedByNode(state).get(slot.nodeId) ?? NOTHING), size);
  return { slot, nodeId: slot.nodeId, resources: size, freeBefore, fromHolds: [], considered: takeable.length };
}
