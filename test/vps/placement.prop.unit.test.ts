import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { driverLabelKey, matchesSelector } from '../../schemas/metal/nodeLabels.ts';
import type { HostResources, PlacementCandidate, PlacementHold, PlacementRequest } from '../../schemas/vps/placement.ts';
import { place, placeHold, placeInTurn, type PlacementSnapshot } from '../../services/vps/placement/placement.ts';

const NOW = 1_000_000;
const dims = ['vcpus', 'memoryMib', 'diskGib'] as const;
const resources = (max: number): fc.Arbitrary<HostResources> =>
  fc.record({ vcpus: fc.integer({ min: 0, max }), memoryMib: fc.integer({ min: 0, max: max * 1_024 }), diskGib: fc.integer({ min: 0, max: max * 10 }) });
const scale = (r: HostResources, f: number): HostResources => ({
  vcpus: Math.floor(r.vcpus * f),
  memoryMib: Math.floor(r.memoryMib * f),
  diskGib: Math.floor(r.diskGib * f),
});

/** Nodes whose instances and holds already fit in them, as a consistent log would leave them. */
const snapshot: fc.Arbitrary<PlacementSnapshot> = fc
  .uniqueArray(
    fc.record({
      nodeId: fc.constantFrom(...Array.from({ length: 10 }, (_, i) => `n${i}`)),
      capacity: resources(64),
      usedShare: fc.double({ min: 0, max: 0.5, noNaN: true }),
      heldShare: fc.double({ min: 0, max: 0.4, noNaN: true }),
      holder: fc.constantFrom<PlacementHold['holder']>({ tenantId: 't1' }, { tenantId: 't2' }, { poolId: 'p1' }),
      expiresIn: fc.integer({ min: -1_000, max: 10_000 }),
      // Mostly nodes that could take an instance, so most requests get as far as capacity and holds.
      drivers: fc.constantFrom(['crun', 'qemu'], ['crun', 'qemu'], ['crun'], ['qemu'], []),
      zone: fc.constantFrom('a', 'b'),
      schedulable: fc.constantFrom(true, true, true, false),
      agentless: fc.constantFrom(false, false, false, true),
    }),
    { selector: (n) => n.nodeId, minLength: 1, maxLength: 8 },
  )
  .map((nodes) => ({
    nowMs: NOW,
    candidates: nodes.map((n): PlacementCandidate => ({
      nodeId: n.nodeId,
      labels: { zone: n.zone, ...Object.fromEntries(n.drivers.map((d) => [driverLabelKey(d), '1.0'])) },
      capacity: n.capacity,
      allocated: scale(n.capacity, n.usedShare),
      schedulable: n.schedulable,
      agentless: n.agentless,
    })),
    holds: nodes.map((n, i): PlacementHold => ({
      holdId: `h${i}`,
      nodeId: n.nodeId,
      holder: n.holder,
      resources: scale(n.capacity, n.heldShare),
      expiresAtMs: NOW + n.expiresIn,
    })),
  }));

const requests: fc.Arbitrary<PlacementRequest[]> = fc.array(
  fc.record({
    instanceId: fc.uuid(),
    tenantId: fc.constantFrom('t1', 't2', 't3'),
    poolId: fc.constantFrom('p1', 'p2'),
    runtime: fc.constantFrom('crun', 'qemu'),
    resources: resources(16),
    selector: fc.constantFrom({}, { matchLabels: { zone: 'a' } }, { matchExpressions: [{ key: 'zone', operator: 'NotIn' as const, values: ['a'] }] }),
  }),
  { maxLength: 12 },
);

const shuffled = <T>(items: readonly T[], seed: number): T[] =>
  items
    .map((item, i) => ({ item, key: (i * 2_654_435_761 + seed) % 4_294_967_296 }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.item);

describe('placement', () => {
  it('never overcommits a node, and never takes capacity another holder keeps', () => {
    fc.assert(
      fc.property(snapshot, requests, (snap, reqs) => {
        const allocated = new Map(snap.candidates.map((c) => [c.nodeId, { ...c.allocated }]));
        const holds = new Map(snap.holds.map((h) => [h.holdId, { ...h.resources }]));
        for (const [i, decision] of placeInTurn(reqs, snap).entries()) {
          if (!decision.placed) continue;
          const node = allocated.get(decision.nodeId)!;
          for (const d of dims) node[d] += reqs[i]!.resources[d];
          for (const drawn of decision.fromHolds) for (const d of dims) holds.get(drawn.holdId)![d] -= drawn.resources[d];
          for (const c of snap.candidates) {
            const kept = snap.holds.filter((h) => h.nodeId === c.nodeId && h.expiresAtMs > NOW).map((h) => holds.get(h.holdId)!);
            for (const d of dims) {
              expect(kept.every((h) => h[d] >= 0)).toBe(true);
              expect(allocated.get(c.nodeId)![d] + kept.reduce((sum, h) => sum + h[d], 0)).toBeLessThanOrEqual(c.capacity[d]);
            }
          }
        }
      }),
    );
  });

  it('places only on schedulable nodes with an agent, the runtime’s driver label and the selector, and explains every refusal', () => {
    fc.assert(
      fc.property(snapshot, requests, (snap, reqs) => {
        for (const request of reqs) {
          const decision = place(request, snap);
          if (decision.placed) {
            const node = snap.candidates.find((c) => c.nodeId === decision.nodeId)!;
            expect(node.schedulable && !node.agentless).toBe(true);
            expect(node.labels).toHaveProperty([driverLabelKey(request.runtime)]);
            expect(matchesSelector(node.labels, request.selector)).toBe(true);
          } else expect(decision.excluded.map((e) => e.nodeId).sort()).toEqual(snap.candidates.map((c) => c.nodeId).sort());
        }
      }),
    );
  });

  it('decides the same whatever order the snapshot lists nodes and holds in', () => {
    fc.assert(
      fc.property(snapshot, requests, fc.integer(), (snap, reqs, seed) => {
        const reordered = { ...snap, candidates: shuffled(snap.candidates, seed), holds: shuffled(snap.holds, seed + 1) };
        expect(placeInTurn(reqs, reordered)).toEqual(placeInTurn(reqs, snap));
      }),
    );
  });

  it('picks the tightest fit among the nodes that fit', () => {
    fc.assert(
      fc.property(snapshot, requests, (snap, reqs) => {
        for (const request of reqs) {
          const decision = place(request, snap);
          if (!decision.placed) continue;
          const after = (free: HostResources) => dims.map((d) => free[d] - request.resources[d]);
          const chosen = after(decision.freeBefore);
          // Any other node that fits would leave at least as much free, in vCPUs first.
          for (const other of snap.candidates.filter((c) => c.nodeId !== decision.nodeId)) {
            const alone = place(request, { ...snap, candidates: [other] });
            if (!alone.placed) continue;
            const theirs = after(alone.freeBefore);
            const firstDiff = dims.findIndex((_, i) => theirs[i] !== chosen[i]);
            if (firstDiff >= 0) expect(theirs[firstDiff]).toBeGreaterThan(chosen[firstDiff]!);
            else expect(other.nodeId > decision.nodeId).toBe(true);
          }
        }
      }),
    );
  });

  it('never holds an agentless or unschedulable node, and a new hold does not stand on any live hold', () => {
    fc.assert(
      fc.property(snapshot, resources(16), (snap, wanted) => {
        const decision = placeHold(wanted, {}, snap);
        if (!decision.placed) return;
        const node = snap.candidates.find((c) => c.nodeId === decision.nodeId)!;
        expect(node.agentless || !node.schedulable).toBe(false);
        expect(decision.fromHolds).toEqual([]);
        const kept = snap.holds.filter((h) => h.nodeId === node.nodeId && h.expiresAtMs > NOW);
        for (const d of dims) expect(node.allocated[d] + kept.reduce((s, h) => s + h.resources[d], 0) + wanted[d]).toBeLessThanOrEqual(node.capacity[d]);
      }),
    );
  });
});
