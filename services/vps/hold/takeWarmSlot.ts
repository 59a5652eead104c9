import { isDeepStrictEqual } from 'node:util';
import { driverLabelKey } from '../../../schemas/metal/nodeLabels.ts';
import type { HoldBookState } from '../../../schemas/vps/holdState.ts';
import type { HoldCandidate } from '../../../schemas/vps/holdCommands.ts';
import type { InstanceReservation } from '../../../schemas/vps/tenantState.ts';
import type { WarmSlot } from '../../../schemas/vps/warmPool.ts';
import { bookSnapshotAt } from '../placement/bookSnapshot.ts';

/**
 * The ready slot a create takes, if any: of its pool, flavor, image, runtime and size, on a node still schedulable with
 * the runtime's driver; the longest ready first, then by slot id, so the same book gives the same slot. With it, what
 * `InstancePlaced` records: the node, its free capacity counting the slot's as the instance's, how many slots could
 * have been taken.
 */
export function takeWarmSlot(state: HoldBookState, reservation: InstanceReservation, runtime: string, candidates: readonly HoldCandidate[], nowMs: number) {
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
  const node = bookSnapshotAt(state, candidates, nowMs).candidates.find((c) => c.nodeId === slot.nodeId)!;
  const freeBefore = {
    vcpus: Math.max(0, node.capacity.vcpus - node.allocated.vcpus) + size.vcpus,
    memoryMib: Math.max(0, node.capacity.memoryMib - node.allocated.memoryMib) + size.memoryMib,
    diskGib: Math.max(0, node.capacity.diskGib - node.allocated.diskGib) + size.diskGib,
  };
  return { slot, nodeId: slot.nodeId, resources: size, freeBefore, fromHolds: [], considered: takeable.length };
}
