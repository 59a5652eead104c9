import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { quotaOf as quotaInReadModel, listInstances } from '../../projections/vps/queries.ts';
import type { CommandResult } from '../../schemas/api.ts';
import { resourceDimensions, type Resources } from '../../schemas/vps/tenantCommands.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { tenantAggregate, usageOf } from '../../services/vps/tenant/tenant.ts';
import { foldStored } from '../arbitraries/backbone.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { flavors, instancePayload, provisionMetalPool, quotaOf } from './vpsPayloads.ts';

const TENANT = 't1';
/** Four command processes; the last never retries, so a lost race can also surface as CONCURRENCY_CONFLICT. */
const RETRIES = [30, 30, 30, 0];
const ZERO = quotaOf(0, 0, 0, 0);

const requestArb = fc.record({
  flavor: fc.constantFrom(...(Object.keys(flavors) as (keyof typeof flavors)[])),
  bus: fc.nat(RETRIES.length - 1),
  delayMs: fc.nat(3),
  // Whether the reconciler saw it running before it was deleted (its reservation then counts as used).
  ran: fc.boolean(),
});
const quotaArb = fc.record({
  instances: fc.integer({ min: 1, max: 6 }),
  vcpus: fc.integer({ min: 1, max: 12 }),
  memoryMib: fc.integer({ min: 1_024, max: 24_576 }),
  diskGib: fc.integer({ min: 10, max: 300 }),
});

const sizeOf = (flavor: keyof typeof flavors): Resources => ({ instances: 1, ...flavors[flavor] });
const plus = (a: Resources, b: Resources): Resources => ({
  instances: a.instances + b.instances,
  vcpus: a.vcpus + b.vcpus,
  memoryMib: a.memoryMib + b.memoryMib,
  diskGib: a.diskGib + b.diskGib,
});
const fits = (usage: Resources, quota: Resources) => resourceDimensions.every((d) => usage[d] <= quota[d]);

type Outcome = { instanceId: string; flavor: keyof typeof flavors; ran: boolean } & ({ ok: true; result: CommandResult } | { ok: false; code: string });

describe('vps quota under concurrency', () => {
  it(
    'concurrent createInstance from several processes never exceeds the quota, and releasing every instance returns usage to zero',
    { timeout: 120_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(quotaArb, fc.array(requestArb, { minLength: 6, maxLength: 14 }), async (quota, requests) => {
          await using env = await startBackbone();
          await provisionMetalPool(env.bus, { [TENANT]: quota });
          const connections = await Promise.all(RETRIES.map((_, i) => connectNats(env.nats.url, `vps-writer-${i}`)));
          try {
            const buses = await Promise.all(
              connections.map(async (nc, i) => new CommandBus(await openEventStore(nc, env.config), allCommands, { retries: RETRIES[i]! })),
            );
            const outcomes = await Promise.all(
              requests.map(async (r, i): Promise<Outcome> => {
                const instanceId = `vm-${i}`;
                await sleep(r.delayMs);
                try {
                  const result = await buses[r.bus]!.execute({
                    name: 'vps.createInstance',
                    payload: instancePayload(TENANT, instanceId, r.flavor),
                    actor: `writer-${r.bus}`,
                  });
                  return { instanceId, flavor: r.flavor, ran: r.ran, ok: true, result };
                } catch (err) {
                  return { instanceId, flavor: r.flavor, ran: r.ran, ok: false, code: (err as { code?: string }).code ?? String(err) };
                }
              }),
            );
            for (const o of outcomes) if (!o.ok) expect(['QUOTA_EXCEEDED', 'CONCURRENCY_CONFLICT'], `${o.instanceId}`).toContain(o.code);
            const accepted = outcomes.filter((o): o is Outcome & { ok: true } => o.ok);
            for (const o of accepted) expect(o.result.events.map((e) => e.type)).toEqual(['InstanceRequested']);
            const acceptedUsage = accepted.reduce((sum, o) => plus(sum, sizeOf(o.flavor)), ZERO);
            expect(fits(acceptedUsage, quota), `accepted ${JSON.stringify(acceptedUsage)} over quota ${JSON.stringify(quota)}`).toBe(true);
            // Usage only grew in this phase, so a request refused for quota must not fit the final usage either.
            for (const o of outcomes)
              if (!o.ok && o.code === 'QUOTA_EXCEEDED') expect(fits(plus(acceptedUsage, sizeOf(o.flavor)), quota), o.instanceId).toBe(false);

            const subject = `bc.evt.vps.tenant.${TENANT}`;
            const log = [];
            for await (const stored of env.store.readAfter(subject, 0)) log.push(...stored.batch.events);
            const folded = foldStored(tenantAggregate, log);
            const requested = log.filter((e) => e.type === 'InstanceRequested').map((e) => (e.data as { instanceId: string }).instanceId);
            expect(requested.sort()).toEqual(accepted.map((o) => o.instanceId).sort());
            expect(usageOf(folded)).toEqual({ used: ZERO, reserved: acceptedUsage });
            const reader = env.readers.get('vps')!;
            await reader.waitFor(await env.store.streamLastSequence(), 10_000);
            expect(quotaInReadModel(reader.db(), TENANT)).toEqual({ limit: quota, used: ZERO, reserved: acceptedUsage });

            // What the reconciler does for each instance, spread over the processes: running (maybe), deleted, released.
            await Promise.all(
              accepted.map(async (o, i) => {
                const bus = buses[i % 3]!;
                const send = (name: string, payload: unknown) => bus.execute({ name, payload, actor: 'reconciler' });
                const ids = { tenantId: TENANT, instanceId: o.instanceId };
                // The reconciler's first report claims the instance's subject for the tenant before it calls the provider.
                await send('vps.recordInstanceObserved', { ...ids, observed: 'provisioning' });
                if (o.ran) {
                  await send('vps.recordInstanceObserved', { ...ids, observed: 'running', providerInstanceId: `p-${o.instanceId}` });
                }
                await send('vps.deleteInstance', ids);
                await send('vps.recordInstanceObserved', { ...ids, observed: 'deleted' });
                await send('vps.releaseQuota', ids);
                // A release the reconciler sends again (after a restart) gives nothing back twice.
                await send('vps.releaseQuota', ids);
              }),
            );
            const fresh = new CommandBus(env.store, allCommands, { retries: 0 });
            const after = (await fresh.repository.load(tenantAggregate, TENANT)).state;
            expect(usageOf(after)).toEqual({ used: ZERO, reserved: ZERO });
            await reader.waitFor(await env.store.streamLastSequence(), 10_000);
            expect(quotaInReadModel(reader.db(), TENANT)).toEqual({ limit: quota, used: ZERO, reserved: ZERO });
            const views = listInstances(reader.db(), { tenantId: TENANT });
            expect(views.map((v) => [v.instanceId, v.state, v.quotaStatus]).sort()).toEqual(accepted.map((o) => [o.instanceId, 'deleted', 'released']).sort());
          } finally {
            for (const nc of connections) await nc.close();
          }
        }),
        { numRuns: 12 },
      );
    },
  );
});
