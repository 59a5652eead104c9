import type { HoldCandidate } from '../../../schemas/vps/holdCommands.ts';
import { placementHoldsOf, type HoldBookState } from '../../../schemas/vps/holdState.ts';
import type { HostResources } from '../../../schemas/vps/placement.ts';
import type { PlacementSnapshot } from './placement.ts';

export const NOTHING: HostResources = { vcpus: 0, memoryMib: 0, diskGib: 0 };
export const plus = (a: HostResources, b: HostResources): HostResources => ({
  vcpus: a.vcpus + b.vcpus,
  memoryMib: a.memoryMib + b.memoryMib,
  diskGib: a.diskGib + b.diskGib,
});
export const lessFloored = (a: HostResources, b: HostResources): HostResources => ({
  vcpus: Math.max(0, a.vcpus - b.vcpus),
  memoryMib: Math.max(0, a.memoryMib - b.memoryMib),
  diskGib: Math.max(0, a.diskGib - b.diskGib),
});

/** What the book's placed instances and warm slots take on each node (a slot's capacity is its pool's alone). */
export function allocatedByNode(state: HoldBookState): Map<string, HostResources> {
  const taken = new Map<string, HostResources>();
  for (const placed of [...Object.values(state.instances ?? {}), ...Object.values(state.warmSlots ?? {})])
    taken.set(placed.nodeId, plus(taken.get(placed.nodeId) ?? NOTHING, placed.resources));
  return taken;
}

/**
 * The placement snapshot a decision on a site's book is taken on: the nodes as the sender saw them (labels, capacity,
 * schedulable), but what instances take of each from the book itself (a sender's `allocated` is ignored: a stale or
 * hostile one could otherwise free capacity that is taken), and the holds active at `nowMs`, each less what the
 * instances drawing on it already use (that capacity counts once, as the instance's).
 */
export function bookSnapshotAt(state: HoldBookState, candidates: readonly HoldCandidate[], nowMs: number): PlacementSnapshot {
  const allocated = allocatedByNode(state);
  const drawn = new Map<string, HostResources>();
  for (const placed of Object.values(state.instances ?? {}))
    for (const d of placed.fromHolds) drawn.set(`${d.holdId}/${placed.nodeId}`, plus(drawn.get(`${d.holdId}/${placed.nodeId}`) ?? NOTHING, d.resources));
  const holds = placementHoldsOf(Object.values(state.holds), nowMs).map((h) => {
    const used = drawn.get(`${h.holdId}/${h.nodeId}`);
    return used ? { ...h, resources: lessFloored(h.resources, used) } : h;
  });
  return { candidates: candidates.map((c) => ({ ...c, allocated: allocated.get(c.nodeId) ?? NOTHING })), holds, nowMs };
}
