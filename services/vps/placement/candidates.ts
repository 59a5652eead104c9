import type { NodeView } from '../../../schemas/metal/views.ts';
import { placementHoldsOf, type HoldRecord } from '../../../schemas/vps/holdState.ts';
import type { HostResources, PlacementCandidate, PlacementHold } from '../../../schemas/vps/placement.ts';
import type { PlacementSnapshot } from './placement.ts';

const GIB = 1_024 ** 3;
const NOTHING: HostResources = { vcpus: 0, memoryMib: 0, diskGib: 0 };

/**
 * What a node can give instances, from its recorded inventory: its cores, its memory and its disks in whole GiB. What
 * the inventory does not know counts as nothing, so a node never inspected takes no instance rather than a guess.
 */
export function hostCapacityOf(inventory: NodeView['inventory']): HostResources {
  if (!inventory) return NOTHING;
  const diskBytes = inventory.disks.reduce((sum, disk) => sum + (disk.sizeBytes ?? 0), 0);
  return { vcpus: inventory.cpus.cores ?? 0, memoryMib: inventory.memoryMiB ?? 0, diskGib: Math.floor(diskBytes / GIB) };
}

/**
 * A node as placement sees it, from the nodes read model's view: its effective labels (the operator's, site,
 * inventory and the drivers its `bcd node` advertises), its capacity, and whether it takes instances at all: deployed,
 * out of maintenance and its agent heard. An agentless node is marked as such rather than unschedulable, so a refusal
 * says why (`AGENTLESS`).
 */
export function placementCandidateOf(node: NodeView, allocated: HostResources): PlacementCandidate {
  const agentless = node.agent === 'none';
  return {
    nodeId: node.nodeId,
    labels: node.labels,
    capacity: hostCapacityOf(node.inventory),
    allocated,
    schedulable: node.state === 'deployed' && !node.maintenance && (agentless || node.connected),
    agentless,
  };
}

/** One placement snapshot from node views, what instances already take on each (absent: nothing) and the holds. */
export function placementSnapshotOf(
  nodes: readonly NodeView[],
  taken: { allocated: ReadonlyMap<string, HostResources>; holds: readonly PlacementHold[]; nowMs: number },
): PlacementSnapshot {
  return {
    candidates: nodes.map((node) => placementCandidateOf(node, taken.allocated.get(node.nodeId) ?? NOTHING)),
    holds: taken.holds,
    nowMs: taken.nowMs,
  };
}

/**
 * The snapshot at `nowMs` with a site's holds as the hold book (or the holds read model) records them: each hold still
 * active then keeps its capacity on its nodes from every placement but its holder's (`place`); an expired or released
 * one keeps nothing, with no event needed for it to stop counting.
 */
export function placementSnapshotWithHolds(
  nodes: readonly NodeView[],
  taken: { allocated: ReadonlyMap<string, HostResources>; holds: Iterable<HoldRecord>; nowMs: number },
): PlacementSnapshot {
  return placementSnapshotOf(nodes, { allocated: taken.allocated, holds: placementHoldsOf(taken.holds, taken.nowMs), nowMs: taken.nowMs });
}
