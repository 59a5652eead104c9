import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { listHolds } from '../../projections/vps/holdQueries.ts';
import type { HoldCandidate } from '../../schemas/vps/holdCommands.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { foldStored } from '../arbitraries/backbone.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { provisionMetalPool, quotaOf } from './vpsPayloads.ts';

/** Four API replicas deciding holds at one site; the last never retries, so a lost race can surface as CONCURRENCY_CONFLICT. */
const RETRIES = [30, 30, 30, 0];
const TENANTS = ['t1', 't2', 't3'];
const dims = ['vcpus', 'memoryMib', 'diskGib'] as const;

const node = (nodeId: string, vcpus: number, memoryMib: number, agentless = false): HoldCandidate => ({
  nodeId,
  labels: { 'bc.dev/site': 'dc1' },
  capacity: { vcpus, memoryMib, diskGib: 200 },
  allocated: { vcpus: 0, memoryMib: 0, diskGib: 0 },
  schedulable: true,
  agentless,
});

const requestArb = fc.record({
  tenant: fc.constantFrom(...TENANTS),
  bus: fc.nat(RETRIES.length - 1),
  delayMs: fc.nat(3),
  nodes: fc.integer({ min: 1, max: 2 }),
  resources: fc.option(
    fc.record({ vcpus: fc.integer({ min: 1, max: 12 }), memoryMib: fc.integer({ min: 512, max: 16_384 }), diskGib: fc.integer({ min: 0, max: 60 }) }),
    {
      nil: undefined,
    },
  ),
});
const siteArb = fc
  .tuple(fc.integer({ min: 4, max: 24 }), fc.integer({ min: 4, max: 24 }), fc.integer({ min: 4, max: 24 }))
  .map(([a, b, c]) => [node('n1', a, a * 1_024), node('n2', b, b * 2_048), node('n3', c, c * 1_024), node('talos', 64, 65_536, true)]);

describe('holds under concurrency', () => {
  it(
    'concurrent holds at one site from several API replicas never keep more of a node than it has, and the read model lists exactly the accepted ones',
    { timeout: 120_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(siteArb, fc.array(requestArb, { minLength: 6, maxLength: 12 }), async (candidates, requests) => {
          await using env = await startBackbone();
          await provisionMetalPool(env.bus, Object.fromEntries(TENANTS.map((t) => [t, quotaOf(0, 0, 0, 0)])));
          const connections = await Promise.all(RETRIES.map((_, i) => connectNats(env.nats.url, `api-replica-${i}`)));
          try {
            const buses = await Promise.all(
              connections.map(async (nc, i) => new CommandBus(await openEventStore(nc, env.config), allCommands, { retries: RETRIES[i]! })),
            );
            const outcomes = await Promise.all(
              requests.map(async (r, i) => {
                await sleep(r.delayMs);
                const payload = {
                  holdId: `h${i}`,
                  siteId: 'dc1',
                  holder: { tenantId: r.tenant },
                  nodes: r.nodes,
                  ...(r.resources ? { resources: r.resources } : {}),
                  selector: {},
                  durationSeconds: 3_600,
                  candidates,
                };
                try {
                  await buses[r.bus]!.execute({ name: 'vps.placeHold', payload, actor: `replica-${r.bus}` });
                  return { holdId: `h${i}`, ok: true as const };
                } catch (err) {
                  return { holdId: `h${i}`, ok: false as const, code: (err as { code?: string }).code ?? String(err) };
                }
              }),
            );
            for (const o of outcomes) if (!o.ok) expect(['NO_CAPACITY', 'CONCURRENCY_CONFLICT'], o.holdId).toContain(o.code);
            const accepted = outcomes.filter((o) => o.ok).map((o) => o.holdId);

            const log = [];
            for await (const stored of env.store.readAfter('bc.evt.vps.holdBook.dc1', 0)) log.push(...stored.batch.events);
            const book = foldStored(holdBookAggregate, log);
            expect(Object.keys(book.holds).sort()).toEqual([...accepted].sort());
            for (const c of candidates) {
              const kept = Object.values(book.holds).flatMap((h) => h.nodes.filter((n) => n.nodeId === c.nodeId).map((n) => n.resources));
              if (c.agentless) expect(kept, 'the agentless node is never held').toEqual([]);
              for (const d of dims)
                expect(
                  kept.reduce((sum, r) => sum + r[d], 0),
                  `${c.nodeId} ${d}`,
                ).toBeLessThanOrEqual(c.capacity[d]);
            }

            const reader = env.readers.get('vps')!;
            await reader.waitFor(await env.store.streamLastSequence(), 10_000);
            const listed = listHolds(reader.db(), { tenantId: null, siteId: 'dc1', status: 'active' }, Date.now());
            expect(listed.map((h) => h.holdId).sort()).toEqual([...accepted].sort());
            for (const t of TENANTS) {
              const own = listHolds(reader.db(), { tenantId: t, siteId: null, status: null }, Date.now());
              expect(own.every((h) => 'tenantId' in h.holder && h.holder.tenantId === t)).toBe(true);
            }
          } finally {
            for (const nc of connections) await nc.close();
          }
        }),
        { numRuns: 6 },
      );
    },
  );
});
