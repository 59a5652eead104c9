import { driverLabelKey, matchesSelector, type LabelSelector } from '../../../schemas/metal/nodeLabels.ts';
import type { Exclusion, HostResources, PlacementCandidate, PlacementDecision, PlacementHold, PlacementRequest } from '../../../schemas/vps/placement.ts';

const DIMENSIONS = ['vcpus', 'memoryMib', 'diskGib'] as const;
const ZERO: HostResources = { vcpus: 0, memoryMib: 0, diskGib: 0 };

const add = (a: HostResources, b: HostResources): HostResources => ({
  vcpus: a.vcpus + b.vcpus,
  memoryMib: a.memoryMib + b.memoryMib,
  diskGib: a.diskGib + b.diskGib,
});
const sub = (a: HostResources, b: HostResources): HostResources => ({
  vcpus: a.vcpus - b.vcpus,
  memoryMib: a.memoryMib - b.memoryMib,
  diskGib: a.diskGib - b.diskGib,
});
const min = (a: HostResources, b: HostResources): HostResources => ({
  vcpus: Math.min(a.vcpus, b.vcpus),
  memoryMib: Math.min(a.memoryMib, b.memoryMib),
  diskGib: Math.min(a.diskGib, b.diskGib),
});

export interface PlacementSnapshot {
  readonly candidates: readonly PlacementCandidate[];
  readonly holds: readonly PlacementHold[];
  readonly nowMs: number;
}

/** Whether the hold is the requester's: its own live holds are capacity it may use, everyone else's are not. */
const holdsFor = (hold: PlacementHold, request: PlacementRequest): boolean =>
  'tenantId' in hold.holder ? hold.holder.tenantId === request.tenantId : hold.holder.poolId === request.poolId;

type Disqualified = Exclude<Exclusion['why'], 'INSUFFICIENT_CAPACITY'>;

/** Why a node cannot take anything of this kind at all, whatever its capacity; undefined when it can. */
export type Qualification = (candidate: PlacementCandidate) => Disqualified | undefined;

const runsInstances = (candidate: PlacementCandidate): Disqualified | undefined =>
  !candidate.schedulable ? 'NOT_SCHEDULABLE' : candidate.agentless ? 'AGENTLESS' : undefined;

/**
 * Where an instance goes, decided on one snapshot and nothing else (no clock, no order of the inputs), so the same
 * snapshot always gives the same node and the decision, recorded as an event with its reason, replays as it was
 * made. A node qualifies when it is schedulable, runs an agent, carries the runtime's driver label and matches the
 * request's selector; it fits when its capacity, less what instances take and what live holds of others keep, covers
 * the request. Among those that fit, best fit wins: the least free vCPUs after placing, then memory, then disk, then
 * the node id. Packing keeps whole machines free for deploys and for holds, which need a node's capacity in one
 * place; spreading for failure domains is what selectors (`bc.dev/site`) are for.
 */
export function place(request: PlacementRequest, snapshot: PlacementSnapshot): PlacementDecision {
  return bestFit(
    (hold) => holdsFor(hold, request),
    request.resources,
    snapshot,
    (candidate) => {
      const cannot = runsInstances(candidate);
      if (cannot) return cannot;
      if (!Object.hasOwn(candidate.labels, driverLabelKey(request.runtime))) return 'NO_RUNTIME_DRIVER';
      return matchesSelector(candidate.labels, request.selector) ? undefined : 'SELECTOR_MISMATCH';
    },
  );
}

/**
 * Where a hold of `resources` goes, by the same rule: any node that runs instances and matches the selector (no
 * runtime asked yet). An agentless node is never held: nothing could ever be placed on it.
 */
export function placeHold(resources: HostResources, selector: LabelSelector, snapshot: PlacementSnapshot): PlacementDecision {
  // A new hold never stands on another: every live hold, the holder's own included, is capacity taken.
  return bestFit(
    () => false,
    resources,
    snapshot,
    (candidate) => runsInstances(candidate) ?? (matchesSelector(candidate.labels, selector) ? undefined : 'SELECTOR_MISMATCH'),
  );
}

function bestFit(own: (hold: PlacementHold) => boolean, wanted: HostResources, snapshot: PlacementSnapshot, qualifies: Qualification): PlacementDecision {
  const live = snapshot.holds.filter((h) => h.expiresAtMs > snapshot.nowMs);
  const excluded: Exclusion[] = [];
  let best: { nodeId: string; freeBefore: HostResources; after: HostResources; own: PlacementHold[] } | undefined;
  for (const candidate of [...snapshot.candidates].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0))) {
    const { nodeId } = candidate;
    const why = qualifies(candidate);
    if (why) {
      excluded.push({ nodeId, why });
      continue;
    }
    const onNode = live.filter((h) => h.nodeId === nodeId);
    const heldByOthers = onNode.filter((h) => !own(h)).reduce((sum, h) => add(sum, h.resources), ZERO);
    const free = sub(sub(candidate.capacity, candidate.allocated), heldByOthers);
    const short = DIMENSIONS.filter((d) => free[d] < wanted[d]);
    if (short.length > 0) {
      excluded.push({ nodeId, why: 'INSUFFICIENT_CAPACITY', short });
      continue;
    }
    const after = sub(free, wanted);
    if (!best || fitsTighter(after, best.after)) best = { nodeId, freeBefore: free, after, own: onNode.filter(own) };
  }
  if (!best) return { placed: false, code: 'NO_NODE_FITS', excluded };
  return { placed: true, nodeId: best.nodeId, freeBefore: best.freeBefore, fromHolds: drawFromHolds(best.own, wanted), considered: snapshot.candidates.length };
}

/** Ties go to the node id order the loop walks in: a later node must be strictly tighter to win. */
function fitsTighter(a: HostResources, b: HostResources): boolean {
  for (const d of DIMENSIONS) if (a[d] !== b[d]) return a[d] < b[d];
  return false;
}

/** The requester's own holds on the node pay for the instance first, oldest-expiring first, each up to what it keeps. */
function drawFromHolds(holds: readonly PlacementHold[], wanted: HostResources): { holdId: string; resources: HostResources }[] {
  const drawn: { holdId: string; resources: HostResources }[] = [];
  let left = wanted;
  for (const hold of [...holds].sort((a, b) => a.expiresAtMs - b.expiresAtMs || (a.holdId < b.holdId ? -1 : 1))) {
    const take = min(hold.resources, left);
    if (DIMENSIONS.every((d) => take[d] === 0)) continue;
    drawn.push({ holdId: hold.holdId, resources: take });
    left = sub(left, take);
  }
  return drawn;
}

/**
 * Places requests one after another on one snapshot, each seeing the ones before it (what a single writer of the
 * placement log does with a burst of creates), and what each drew from holds. Returns each decision in order.
 */
export function placeInTurn(requests: readonly PlacementRequest[], snapshot: PlacementSnapshot): PlacementDecision[] {
  const candidates = new Map(snapshot.candidates.map((c) => [c.nodeId, c]));
  let holds = [...snapshot.holds];
  return requests.map((request) => {
    const decision = place(request, { candidates: [...candidates.values()], holds, nowMs: snapshot.nowMs });
    if (decision.placed) {
      const node = candidates.get(decision.nodeId)!;
      candidates.set(node.nodeId, { ...node, allocated: add(node.allocated, request.resources) });
      holds = holds.map((h) => {
        const drawn = decision.fromHolds.find((d) => d.holdId === h.holdId);
        return drawn ? { ...h, resources: sub(h.resources, drawn.resources) } : h;
      });
    }
    return decision;
  });
}
