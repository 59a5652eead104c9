import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { driverLabelKey } from '../../schemas/metal/nodeLabels.ts';
import type { HoldBookEvent } from '../../schemas/vps/events.ts';
import type { HoldCandidate } from '../../schemas/vps/holdCommands.ts';
import type { HoldBookState } from '../../schemas/vps/holdState.ts';
import type { HostResources } from '../../schemas/vps/placement.ts';
import type { PoolState } from '../../schemas/vps/poolState.ts';
import { reservationOf, type TenantState } from '../../schemas/vps/tenantState.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { allocatedByNode } from '../../services/vps/placement/bookSnapshot.ts';
import { placeInstance } from '../../services/vps/hold/placeInstance.ts';
import { tenantAggregate } from '../../services/vps/tenant/tenant.ts';

const T0 = '2026-12-06T12:00:00.000Z';
const NOW = Date.parse(T0);
const dims = ['vcpus', 'memoryMib', 'diskGib'] as const;
const pool: PoolState = {
  exists: true,
  poolId: 'p1',
  class: 'metal',
  agent: 'bcd',
  accountId: null,
  siteId: 'dc1',
  runtime: 'crun',
  policy: { allowUnverifiedRelease: false, provisioningCidrs: [] },
  offeredTo: ['t1', 't2', 't3'],
};
const tenants = ['t1', 't2', 't3'] as const;

/** A tenant with the requested instances reserved, folded from its events as the log would leave it. */
function tenantWith(tenantId: string, requests: readonly { instanceId: string; flavor: HostResources }[]): TenantState {
  let state = tenantAggregate.evolve(tenantAggregate.initialState, { type: 'TenantCreated', data: { tenantId, name: tenantId } });
  for (const { instanceId, flavor } of requests) {
    state = tenantAggregate.evolve(state, {
      type: 'InstanceRequested',
      data: {
        tenantId,
        instanceId,
        poolId: 'p1',
        flavorId: 'f',
        image: 'img',
        sshKeys: [],
        userData: null,
        resources: { instances: 1, ...flavor },
        requestedAt: T0,
      },
    });
  }
  return state;
}

/** The size of the warm slots the book holds: a create of that size in pool p1 may take a ready one. */
const SLOT: HostResources = { vcpus: 2, memoryMib: 2_048, diskGib: 20 };

const resources = (max: number): fc.Arbitrary<HostResources> =>
  fc.record({ vcpus: fc.integer({ min: 1, max }), memoryMib: fc.integer({ min: 1, max: max * 1_024 }), diskGib: fc.integer({ min: 1, max: max * 10 }) });

const world = fc.record({
  nodes: fc.uniqueArray(
    fc.record({
      nodeId: fc.constantFrom(...Array.from({ length: 6 }, (_, i) => `n${i}`)),
      capacity: resources(16),
      driver: fc.constantFrom(true, true, true, false),
      schedulable: fc.constantFrom(true, true, true, false),
      heldShare: fc.double({ min: 0, max: 0.5, noNaN: true }),
      holder: fc.constantFrom<{ tenantId: string } | { poolId: string }>({ tenantId: 't1' }, { tenantId: 'other' }, { poolId: 'p1' }, { poolId: 'p9' }),
      // A warm slot of pool p1 (takeable by its creates of the slot's size once ready) or of another pool (never).
      slot: fc.option(fc.record({ poolId: fc.constantFrom('p1', 'p9'), ready: fc.boolean() }), { nil: null }),
    }),
    { selector: (n) => n.nodeId, minLength: 1, maxLength: 6 },
  ),
  // Each process's creates, each of one tenant and one flavor.
  processes: fc.array(
    fc.array(fc.record({ tenant: fc.constantFrom(...tenants), flavor: fc.oneof(resources(6), fc.constant(SLOT)) }), { minLength: 1, maxLength: 6 }),
    {
      minLength: 2,
      maxLength: 4,
    },
  ),
  // Which process takes the next step: reading the book and deciding, or appending what it decided.
  schedule: fc.array(fc.nat(), { minLength: 200, maxLength: 400 }),
});

describe('vps.placeInstance under concurrent creates (optimistic concurrency on the site book)', () => {
  it('never overcommits a node or takes capacity another holder keeps, places only on qualified nodes, and every create ends', () => {
    fc.assert(
      fc.property(world, ({ nodes, processes, schedule }) => {
        const candidates: HoldCandidate[] = nodes.map((n) => ({
          nodeId: n.nodeId,
          labels: n.driver ? { [driverLabelKey('crun')]: '1.0.0' } : {},
          capacity: n.capacity,
          // A sender's word on what is taken is ignored: the book counts its own instances.
          allocated: { vcpus: 0, memoryMib: 0, diskGib: 0 },
          schedulable: n.schedulable,
          agentless: false,
        }));
        // One live hold per node, fitting in it.
        const log: HoldBookEvent[] = nodes.map((n, i) => ({
          type: 'HoldPlaced',
          data: {
            siteId: 'dc1',
            holdId: `h${i}`,
            holder: n.holder,
            nodes: [
              {
                nodeId: n.nodeId,
                resources: Object.fromEntries(dims.map((d) => [d, Math.floor(n.capacity[d] * n.heldShare)])) as HostResources,
                freeBefore: n.capacity,
              },
            ],
            wholeNodes: false,
            selector: {},
            durationSeconds: 3_600,
            considered: nodes.length,
            placedAt: T0,
            expiresAt: new Date(NOW + 3_600_000).toISOString(),
          },
        }));
        // A warm slot on each node that has one and room for it beside its hold.
        const slots = nodes.flatMap((n, i) => {
          const held = (log[i]!.data as { nodes: { resources: HostResources }[] }).nodes[0]!.resources;
          return n.slot && dims.every((d) => SLOT[d] + held[d] <= n.capacity[d]) ? [{ ...n.slot, slotId: `s${i}`, nodeId: n.nodeId }] : [];
        });
        for (const slot of slots) {
          const { slotId, nodeId, poolId } = slot;
          const data = {
            siteId: 'dc1',
            slotId,
            poolId,
            flavorId: 'f',
            image: 'img',
            runtime: 'crun',
            nodeId,
            resources: SLOT,
            freeBefore: SLOT,
            considered: 1,
            placedAt: T0,
          };
          log.push({ type: 'WarmSlotPlaced', data });
          if (slot.ready) log.push({ type: 'WarmSlotReady', data: { siteId: 'dc1', slotId, nodeId, readyAt: T0 } });
        }
        const fold = (events: readonly HoldBookEvent[]): HoldBookState => events.reduce(holdBookAggregate.evolve, holdBookAggregate.initialState);
        const requests = processes.flatMap((creates, p) => creates.map((c, i) => ({ ...c, instanceId: `i${p}-${i}`, process: p })));
        const tenantStates = new Map(
          tenants.map((t) => [
            t,
            tenantWith(
              t,
              requests.filter((r) => r.tenant === t),
            ),
          ]),
        );
        const queues = processes.map((_, p) => requests.filter((r) => r.process === p));
        const pending = new Map<number, { version: number; events: readonly HoldBookEvent[] }>();
        const refused = new Set<string>();
        const decideFor = (request: (typeof requests)[number]) => {
          const tenant = tenantStates.get(request.tenant)!;
          return placeInstance.decide({ siteId: 'dc1', tenantId: request.tenant, instanceId: request.instanceId, candidates }, fold(log), {
            commandId: `cmd-${request.instanceId}-0000`,
            actor: 'vps_reconciler',
            now: T0,
            dependencies: { reservation: reservationOf(tenant, request.instanceId), pool },
          });
        };
        const step = (p: number) => {
          const request = queues[p]![0];
          if (!request) return;
          const decided = pending.get(p);
          if (!decided) {
            try {
              pending.set(p, { version: log.length, events: decideFor(request) });
            } catch (err) {
              expect(err).toBeInstanceOf(DomainError);
              expect((err as DomainError).code).toBe('NO_CAPACITY');
              refused.add(request.instanceId);
              queues[p]!.shift();
            }
            return;
          }
          pending.delete(p);
          // The append expects the version it decided on; another process appended since: re-read and re-decide.
          if (decided.version !== log.length) return;
          log.push(...decided.events);
          queues[p]!.shift();
        };
        for (const s of schedule) step(s % processes.length);
        // Whatever the schedule left undone runs to its end, one process after another.
        for (let p = 0; p < processes.length; p++) while (queues[p]!.length > 0) step(p);

        const book = fold(log);
        const placed = Object.values(book.instances ?? {});
        // Every create ended placed exactly once, or refused.
        expect(placed.length + refused.size).toBe(requests.length);
        for (const r of requests) expect(placed.some((i) => i.instanceId === r.instanceId)).toBe(!refused.has(r.instanceId));
        const allocated = allocatedByNode(book);
        for (const n of nodes) {
          const taken = allocated.get(n.nodeId) ?? { vcpus: 0, memoryMib: 0, diskGib: 0 };
          const onNode = placed.filter((i) => i.nodeId === n.nodeId);
          const drawn = (d: (typeof dims)[number]) => onNode.flatMap((i) => i.fromHolds).reduce((sum, h) => sum + h.resources[d], 0);
          const hold = log[nodes.indexOf(n)]!.data as { nodes: { resources: HostResources }[] };
          for (const d of dims) {
            // No overcommit: instances plus what the hold still keeps (less what its holder's instances drew) fit.
            expect(taken[d]).toBeLessThanOrEqual(n.capacity[d]);
            expect(drawn(d)).toBeLessThanOrEqual(hold.nodes[0]!.resources[d]);
            expect(taken[d] + hold.nodes[0]!.resources[d] - drawn(d)).toBeLessThanOrEqual(n.capacity[d]);
          }
          // Only nodes that qualify: schedulable and carrying the pool's runtime driver.
          if (onNode.length > 0) expect(n.driver && n.schedulable).toBe(true);
        }
        // A warm slot is kept for its pool until one of its creates takes it: ready, of the slot's size, on the slot's
        // node, once; no other create draws on its capacity (the overcommit checks above count it as taken).
        const takers = log.flatMap((e) => (e.type === 'InstancePlaced' && e.data.warmSlot ? [e.data] : []));
        for (const slot of slots) {
          const took = takers.filter((t) => t.warmSlot!.slotId === slot.slotId);
          expect(took.length).toBeLessThanOrEqual(1);
          expect(book.warmSlots?.[slot.slotId] === undefined).toBe(took.length === 1);
          if (took.length === 0) continue;
          expect(slot.poolId === 'p1' && slot.ready).toBe(true);
          expect(took[0]).toMatchObject({ poolId: 'p1', nodeId: slot.nodeId, resources: SLOT });
        }
      }),
      { numRuns: 150 },
    );
  });

  it('decides the same node for the same snapshot, whatever order the candidates come in', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ nodeId: fc.constantFrom('a', 'b', 'c', 'd', 'e'), capacity: resources(16) }), {
          selector: (n) => n.nodeId,
          minLength: 1,
          maxLength: 5,
        }),
        resources(4),
        (nodes, flavor) => {
          const candidates: HoldCandidate[] = nodes.map((n) => ({
            nodeId: n.nodeId,
            labels: { [driverLabelKey('crun')]: '1.0.0' },
            capacity: n.capacity,
            allocated: { vcpus: 0, memoryMib: 0, diskGib: 0 },
            schedulable: true,
            agentless: false,
          }));
          const tenant = tenantWith('t1', [{ instanceId: 'i1', flavor }]);
          const decide = (order: readonly HoldCandidate[]) => {
            try {
              return placeInstance.decide({ siteId: 'dc1', tenantId: 't1', instanceId: 'i1', candidates: [...order] }, holdBookAggregate.initialState, {
                commandId: 'cmd-00000001',
                actor: 'vps_reconciler',
                now: T0,
                dependencies: { reservation: reservationOf(tenant, 'i1'), pool },
              });
            } catch (err) {
              return (err as DomainError).code;
            }
          };
          expect(decide([...candidates].reverse())).toEqual(decide(candidates));
        },
      ),
    );
  });
});
