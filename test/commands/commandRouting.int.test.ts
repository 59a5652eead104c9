import { RequestError, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { COMMAND_PARTITIONS, commandPartitionOf } from '../../schemas/commandPartitions.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { serveCommands, type CommandResponder } from '../../services/commands/commandResponder.ts';
import type { PartitionTiming } from '../../services/commands/responderPartitions.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { startBackbone } from '../support/backboneFixture.ts';

type Backbone = Awaited<ReturnType<typeof startBackbone>>;
const everyPartition = Array.from({ length: COMMAND_PARTITIONS }, (_, p) => p);

/** A `commands` replica as a process of its own runs it: its own connection, event store and bus. */
async function replica(env: Backbone, name: string, answeredBy: Map<string, string>, timing: PartitionTiming) {
  const nc: NatsConnection = await connectNats(env.nats.url, name);
  const bus = new CommandBus(await openEventStore(nc, env.config), allCommands, { retries: env.config.commandRetries });
  const execute = bus.execute.bind(bus);
  bus.execute = (request) => {
    answeredBy.set((request.payload as { siteId: string }).siteId, name);
    return execute(request);
  };
  const responder: CommandResponder = serveCommands(nc, bus, env.log, undefined, { partitions: timing });
  return { nc, responder, owned: () => responder.partitions!.owned(), members: () => responder.partitions!.members() };
}

const createSite = (env: Backbone, siteId: string) => sendCommand(env.nc, 'site.create', { siteId, name: siteId }, { commandId: `route-${siteId}` });
const partitionOfSite = (siteId: string) => commandPartitionOf(`site.site.${siteId}`);

describe('command routing by aggregate', () => {
  it('answers each aggregate on the replica owning its partition, and on the queue group while an owner is gone', async () => {
    await using env = await startBackbone({ projectors: false });
    const answeredBy = new Map<string, string>();
    const timing = { beatMs: 100, expiryMs: 3_000 };
    const a = await replica(env, 'a', answeredBy, timing);
    const b = await replica(env, 'b', answeredBy, timing);
    await expect.poll(() => [a.members().length, b.members().length], { timeout: 5_000 }).toEqual([2, 2]);
    expect([...a.owned(), ...b.owned()].sort((x, y) => x - y)).toEqual(everyPartition);
    expect(a.owned().length).toBeGreaterThan(0);
    expect(b.owned().length).toBeGreaterThan(0);

    const sites = Array.from({ length: 40 }, (_, i) => `dc${i}`);
    await Promise.all(sites.map((siteId) => createSite(env, siteId)));
    for (const siteId of sites) expect(answeredBy.get(siteId), siteId).toBe(a.owned().includes(partitionOfSite(siteId)) ? 'a' : 'b');
    expect(new Set(answeredBy.values())).toEqual(new Set(['a', 'b']));

    // b dies without a word. Once the server has dropped its connection (a request sent before that is lost, as one
    // to a queue member that dies is), b's partitions have no subscriber: the senders fall back to the queue group,
    // before a has even noticed b is gone.
    const orphans = sites.map((s) => `${s}-again`).filter((siteId) => !a.owned().includes(partitionOfSite(siteId)));
    expect(orphans.length).toBeGreaterThan(0);
    const bPartition = Subjects.partitionedCommand(b.owned()[0]!, 'site.create');
    await b.nc.close();
    const dropped = () =>
      env.nc.request(bPartition, '', { timeout: 250 }).then(
        () => false,
        (err: unknown) => err instanceof RequestError && err.isNoResponders(),
      );
    await expect.poll(dropped, { timeout: 5_000 }).toBe(true);
    expect(a.members()).toHaveLength(2);
    for (const siteId of orphans) {
      await expect(createSite(env, siteId)).resolves.toMatchObject({ aggregate: { id: siteId }, duplicate: false });
      expect(answeredBy.get(siteId)).toBe('a');
    }
    await expect.poll(() => a.owned(), { timeout: 10_000 }).toEqual(everyPartition);
    expect(a.members()).toHaveLength(1);
    a.responder.unsubscribe();
    await a.nc.close();
  });

  it('shares out again at once when a replica joins or says it is leaving', async () => {
    await using env = await startBackbone({ projectors: false });
    const answeredBy = new Map<string, string>();
    // Nobody expires in this test: every change must come from an announcement.
    const timing = { beatMs: 60_000, expiryMs: 600_000 };
    const a = await replica(env, 'a', answeredBy, timing);
    expect(a.owned()).toEqual(everyPartition);
    const c = await replica(env, 'c', answeredBy, timing);
    await expect.poll(() => [a.members().length, c.members().length], { timeout: 5_000 }).toEqual([2, 2]);
    expect([...a.owned(), ...c.owned()].sort((x, y) => x - y)).toEqual(everyPartition);
    expect(c.owned().length).toBeGreaterThan(0);

    const cHeld = c.owned();
    c.responder.unsubscribe();
    expect(c.owned()).toEqual([]);
    await expect.poll(() => a.owned(), { timeout: 5_000 }).toEqual(everyPartition);
    const siteId = Array.from({ length: 500 }, (_, i) => `dc${i}`).find((s) => cHeld.includes(partitionOfSite(s)))!;
    await expect(createSite(env, siteId)).resolves.toMatchObject({ duplicate: false });
    expect(answeredBy.get(siteId)).toBe('a');
    a.responder.unsubscribe();
    await Promise.all([a.nc.close(), c.nc.close()]);
  });
});
