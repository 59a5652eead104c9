import type { LabelSelector } from '../../../schemas/metal/nodeLabels.ts';
import type { Exclusion, HostResources, PlacementCandidate, PlacementHold } from '../../../schemas/vps/placement.ts';
import { placeHold, type PlacementSnapshot } from './placement.ts';

/** What a hold asks: `nodes` distinct nodes matching `selector`, each keeping `resources`, or the whole node without them. */
export interface HoldAsk {
  readonly holdId: string;
  readonly holder: PlacementHold['holder'];
  readonly nodes: number;
  readonly resources?: HostResources | undefined;
  readonly selector: LabelSelector;
  readonly expiresAtMs: number;
}

export interface HeldNodeDecision {
  readonly nodeId: string;
  readonly resources: HostResources;
  /** What the node had free for the hold when it was chosen: why it was chosen (best fit: the least left over). */
  readonly freeBefore: HostResources;
}

export type HoldDecision =
  | { readonly placed: true; readonly nodes: readonly HeldNodeDecision[]; readonly considered: number }
  /** `found` nodes could be held of the `nodes` asked; `excluded` says why each other node could not. */
  | { readonly placed: false; readonly found: number; readonly excluded: readonly Exclusion[] };

const byId = (a: PlacementCandidate, b: PlacementCandidate) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0);
const bySize = (a: PlacementCandidate, b: PlacementCandidate) =>
  a.capacity.vcpus - b.capacity.vcpus || a.capacity.memoryMib - b.capacity.memoryMib || a.capacity.diskGib - b.capacity.diskGib || byId(a, b);
const isNothing = (r: HostResources) => r.vcpus === 0 && r.memoryMib === 0 && r.diskGib === 0;

/**
 * Where a hold goes, on one snapshot and nothing else, node by node through the placement core (`placeHold`), each
 * choice seeing the ones before it as held, so a hold never takes one node twice and never more than the node has.
 * Capacity holds take the best fit each time; whole-node holds take nodes with nothing placed or held on them, the
 * smallest first (keeping the large machines for what only they can take), then by node id. All or nothing: a hold
 * that cannot have every node it asks for takes none, and says why for each node it could not use.
 */
export function decideHold(ask: HoldAsk, snapshot: PlacementSnapshot): HoldDecision {
  return ask.resources === undefined ? wholeNodes(ask, snapshot) : capacityOnNodes(ask, ask.resources, snapshot);
}

function capacityOnNodes(ask: HoldAsk, resources: HostResources, snapshot: PlacementSnapshot): HoldDecision {
  const chosen: HeldNodeDecision[] = [];
  let holds = [...snapshot.holds];
  while (chosen.length < ask.nodes) {
    const left = snapshot.candidates.filter((c) => !chosen.some((n) => n.nodeId === c.nodeId));
    const decision = placeHold(resources, ask.selector, { candidates: left, holds, nowMs: snapshot.nowMs });
    if (!decision.placed) return { placed: false, found: chosen.length, excluded: decision.excluded };
    chosen.push({ nodeId: decision.nodeId, resources, freeBefore: decision.freeBefore });
    holds = [...holds, { holdId: ask.holdId, nodeId: decision.nodeId, holder: ask.holder, resources, expiresAtMs: ask.expiresAtMs }];
  }
  return { placed: true, nodes: chosen, considered: snapshot.candidates.length };
}

function wholeNodes(ask: HoldAsk, snapshot: PlacementSnapshot): HoldDecision {
  const chosen: HeldNodeDecision[] = [];
  const excluded: Exclusion[] = [];
  for (const candidate of [...snapshot.candidates].sort(bySize)) {
    if (chosen.length === ask.nodes) break;
    // A node with no known capacity has nothing to hold; it is short of everything.
    if (isNothing(candidate.capacity) && candidate.schedulable && !candidate.agentless) {
      excluded.push({ nodeId: candidate.nodeId, why: 'INSUFFICIENT_CAPACITY', short: ['vcpus', 'memoryMib', 'diskGib'] });
      continue;
    }
    // The whole node fits only when nothing is placed or held on it.
    const decision = placeHold(candidate.capacity, ask.selector, { candidates: [candidate], holds: snapshot.holds, nowMs: snapshot.nowMs });
    if (decision.placed) chosen.push({ nodeId: candidate.nodeId, resources: candidate.capacity, freeBefore: decision.freeBefore });
    else excluded.push(...decision.excluded);
  }
  if (chosen.length < ask.nodes) return { placed: false, found: chosen.length, excluded: excluded.sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1)) };
  return { placed: true, nodes: chosen, considered: snapshot.candidates.length };
}
