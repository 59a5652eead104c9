import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesSelector } from '../../schemas/metal/nodeLabels.ts';
import type { HoldBookEvent } from '../../schemas/vps/events.ts';
import { PlaceHold, type HoldCandidate } from '../../schemas/vps/holdCommands.ts';
import { holdStatusAt, type HoldBookState } from '../../schemas/vps/holdState.ts';
import type { HostResources } from '../../schemas/vps/placement.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { placeHold } from '../../services/vps/hold/place.ts';
import { releaseHold } from '../../services/vps/hold/release.ts';

const T0 = Date.parse('2026-12-06T12:00:00.000Z');
const dims = ['vcpus', 'memoryMib', 'diskGib'] as const;
const tenants = ['t1', 't2', 't3'];
const dependencies = { tenant: { exists: true } as never, pool: undefined };

const candidates: fc.Arbitrary<HoldCandidate[]> = fc.uniqueArray(
  fc.record({
    nodeId: fc.constantFrom(...Array.from({ length: 8 }, (_, i) => `n${i}`)),
    labels: fc.constantFrom({ zone: 'a' }, { zone: 'b' }),
    capacity: fc.record({ vcpus: fc.integer({ min: 0, max: 64 }), memoryMib: fc.integer({ min: 0, max: 65_536 }), diskGib: fc.integer({ min: 0, max: 500 }) }),
    allocated: fc.constant({ vcpus: 0, memoryMib: 0, diskGib: 0 }),
    schedulable: fc.constantFrom(true, true, true, false),
    agentless: fc.constantFrom(false, false, false, true),
  }),
  { selector: (n) => n.nodeId, minLength: 1, maxLength: 6 },
);

const step = fc.oneof(
  fc.record({
    kind: fc.constant('place' as const),
    holder: fc.constantFrom(...tenants),
    nodes: fc.integer({ min: 1, max: 3 }),
    resources: fc.option(
      fc.record({ vcpus: fc.integer({ min: 0, max: 24 }), memoryMib: fc.integer({ min: 0, max: 20_000 }), diskGib: fc.integer({ min: 0, max: 200 }) }),
      {
        nil: undefined,
      },
    ),
    selector: fc.constantFrom({}, { matchLabels: { zone: 'a' } }),
    durationSeconds: fc.integer({ min: 60, max: 600 }),
    afterSeconds: fc.integer({ min: 0, max: 120 }),
  }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), afterSeconds: fc.integer({ min: 0, max: 120 }) }),
);

/** What active holds keep of each node at `nowMs`. */
function heldAt(state: HoldBookState, nowMs: number): Map<string, HostResources> {
  const held = new Map<string, HostResources>();
  for (const hold of Object.values(state.holds)) {
    if (holdStatusAt(hold, nowMs) !== 'active') continue;
    for (const n of hold.nodes) {
      const sum = held.get(n.nodeId) ?? { vcpus: 0, memoryMib: 0, diskGib: 0 };
      held.set(n.nodeId, {
        vcpus: sum.vcpus + n.resources.vcpus,
        memoryMib: sum.memoryMib + n.resources.memoryMib,
        diskGib: sum.diskGib + n.resources.diskGib,
      });
    }
  }
  return held;
}

describe('hold placement', () => {
  it('holds decided one after another never keep more of a node than it has, only on nodes that may be held, and replay as decided', () => {
    fc.assert(
      fc.property(candidates, fc.array(step, { minLength: 1, maxLength: 14 }), (nodes, steps) => {
        let state = holdBookAggregate.initialState;
        const log: HoldBookEvent[] = [];
        let nowMs = T0;
        for (const [i, s] of steps.entries()) {
          nowMs += s.afterSeconds * 1_000;
          const ctx = { commandId: `c${i}`, actor: 'test', now: new Date(nowMs).toISOString(), dependencies };
          let events: readonly HoldBookEvent[] = [];
          if (s.kind === 'release') {
            const ids = Object.keys(state.holds);
            if (ids.length === 0) continue;
            events = releaseHold.decide({ siteId: 'dc1', holdId: ids[s.pick % ids.length]! }, state, { ...ctx, dependencies: undefined });
          } else {
            const command = PlaceHold.parse({
              holdId: `h${i}`,
              siteId: 'dc1',
              holder: { tenantId: s.holder },
              nodes: s.nodes,
              ...(s.resources ? { resources: s.resources } : {}),
              selector: s.selector,
              durationSeconds: s.durationSeconds,
              candidates: nodes,
            });
            try {
              events = placeHold.decide(command, state, ctx);
            } catch (err) {
              expect(['NO_CAPACITY', 'AGENTLESS_NOT_HOLDABLE']).toContain((err as { code: string }).code);
              continue;
            }
            // Decided on the same snapshot with the nodes in another order: the same decision.
            expect(placeHold.decide({ ...command, candidates: [...nodes].reverse() }, state, ctx)).toEqual(events);
            const placed = events[0]!.type === 'HoldPlaced' ? events[0]!.data : undefined;
            expect(new Set(placed!.nodes.map((n) => n.nodeId)).size).toBe(s.nodes);
            for (const n of placed!.nodes) {
              const candidate = nodes.find((c) => c.nodeId === n.nodeId)!;
              expect(candidate.schedulable && !candidate.agentless && matchesSelector(candidate.labels, s.selector)).toBe(true);
            }
          }
          state = events.reduce((acc, e) => holdBookAggregate.evolve(acc, e), state);
          log.push(...events);
          for (const [nodeId, held] of heldAt(state, nowMs)) {
            const capacity = nodes.find((c) => c.nodeId === nodeId)!.capacity;
            for (const d of dims) expect(held[d], `${nodeId} ${d}`).toBeLessThanOrEqual(capacity[d]);
          }
        }
        // The log folds back to the state the decisions saw.
        expect(log.reduce((acc, e) => holdBookAggregate.evolve(acc, e), holdBookAggregate.initialState)).toEqual(state);
      }),
      { numRuns: 300 },
    );
  });
});
