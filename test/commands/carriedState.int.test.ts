import { describe, expect, test, vi } from 'vitest';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { nodeAggregate, type NodeAggregateState } from '../../services/metal/node/node.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import type { AggregateDefinition } from '../../services/platform/commands/commandDefinition.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import type { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import { foldStored } from '../arbitraries/backbone.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { startBackbone } from '../support/backboneFixture.ts';

const kindOf = (subject: string) => subject.split('.').slice(0, 4).join('.');

/** The state each message carries (`aggregateState.ts`): one get for a cold load, never trusted beyond its fold version. */
describe('carried aggregate states', () => {
  test('a state written by another fold version is ignored: the events are read and folded by the current fold', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const run = (name: string, payload: unknown) => backbone.bus.execute({ name, payload, actor: 'test' });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await run('metal.enroll', enrollPayload('n1'));
    for (let i = 0; i < 6; i++) await run('metal.setMaintenance', i % 2 ? { nodeId: 'n1', on: false } : { nodeId: 'n1', on: true, reason: `r${i}` });

    const requests = vi.spyOn(backbone.nc, 'request');
    const current = await new AggregateRepository(backbone.store).load(nodeAggregate, 'n1');
    expect(requests.mock.calls.map(([subject]) => kindOf(subject))).toEqual(['$JS.API.DIRECT.GET']);
    requests.mockClear();

    // The code changed: the same events now fold into another state, and the version says so.
    const changed: AggregateDefinition<NodeAggregateState & { foldedBy?: number }> = {
      ...nodeAggregate,
      stateVersion: 2,
      evolve: (state, event) => ({ ...nodeAggregate.evolve(state, event as never), foldedBy: 2 }),
    };
    const reloaded = await new AggregateRepository(backbone.store).load(changed, 'n1');
    expect(requests.mock.calls.map(([subject]) => kindOf(subject))).toEqual(['$JS.API.DIRECT.GET', '$JS.API.CONSUMER.CREATE']);
    requests.mockRestore();
    const log = [];
    for await (const stored of backbone.store.readAfter('bc.evt.metal.node.n1', 0)) log.push(stored);
    expect(reloaded.state).toEqual(
      foldStored(
        changed,
        log.flatMap((m) => m.batch.events),
      ),
    );
    expect(reloaded.state).toMatchObject({ foldedBy: 2 });
    expect({ ...reloaded.state, foldedBy: undefined }).toEqual({ ...current.state, foldedBy: undefined });
    expect(reloaded.commandsFrom).toBeUndefined();

    // An aggregate that declares no version carries no state: its loads read the events.
    const undeclared: AggregateDefinition<NodeAggregateState> = { ...nodeAggregate, stateVersion: undefined };
    expect((await new AggregateRepository(backbone.store).load(undeclared, 'n1')).commandsFrom).toBeUndefined();
  });

  test('a command retried on a process that loaded the aggregate from a carried state answers its original result', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const run = (name: string, payload: unknown, commandId?: string) => backbone.bus.execute({ name, payload, actor: 'test', commandId });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await run('metal.enroll', enrollPayload('n1'));
    const original = await run('metal.setMaintenance', { nodeId: 'n1', on: true, reason: 'fan' }, 'retried-command-1');
    for (let i = 0; i < 3; i++) await run('metal.setLabels', { nodeId: 'n1', set: { rack: `r${i}` } });

    // Another process, nothing cached: it reads the carried state, then the command ids it remembers, not JetStream's
    // duplicate window (the retry is decided before any append).
    const other = new CommandBus(backbone.store, allCommands, { retries: 0 });
    const appends = vi.spyOn(backbone.store, 'append');
    const retried = await other.execute({
      name: 'metal.setMaintenance',
      payload: { nodeId: 'n1', on: true, reason: 'fan' },
      actor: 'test',
      commandId: 'retried-command-1',
    });
    expect(appends).not.toHaveBeenCalled();
    appends.mockRestore();
    expect(retried).toMatchObject({ duplicate: true, seq: original.seq, events: original.events });
    // Its cache now holds the ids, and the state is the one the log folds to.
    const held = other.repository.cachedOrInitial(nodeAggregate, 'n1');
    expect(held.commandsFrom).toBeUndefined();
    expect(held.commands.get('retried-command-1')?.seq).toBe(original.seq);
    expect(held.state).toEqual((await new AggregateRepository(backbone.store).load(nodeAggregate, 'n1', 'replica', { carried: false })).state);
  });

  test('a state of several KB travels whole every few messages; a load of one between reads from the one it names', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const run = (name: string, payload: unknown) => backbone.bus.execute({ name, payload, actor: 'test' });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await run('metal.enroll', enrollPayload('n1'));
    // 40 labels of about 70 characters: a state of about 3 KB, carried whole every 4th message.
    await run('metal.setLabels', { nodeId: 'n1', set: Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`long-label-${k}`, 'x'.repeat(56)])) });
    const kinds: string[] = [];
    for (let i = 0; i < 8; i++) {
      await run('metal.setMaintenance', i % 2 ? { nodeId: 'n1', on: false } : { nodeId: 'n1', on: true, reason: `r${i}` });
      for (const other of ['n2', 'n3']) await run('metal.enroll', enrollPayload(`${other}-${i}`));
      const last = await backbone.store.lastEntry('bc.evt.metal.node.n1');
      const value = last?.held === false ? last.entry.state : undefined;
      expect(value).toMatch(/^1 (@\d+|\d+ \{)/);
      const requests = vi.spyOn(backbone.nc, 'request');
      const loaded = await new AggregateRepository(backbone.store).load(nodeAggregate, 'n1');
      kinds.push(requests.mock.calls.map(([subject]) => kindOf(subject).slice('$JS.API.'.length)).join('+'));
      requests.mockRestore();
      const byEvents = await new AggregateRepository(backbone.store).load(nodeAggregate, 'n1', 'replica', { carried: false });
      expect({ state: loaded.state, seq: loaded.seq, length: loaded.length }).toEqual({ state: byEvents.state, seq: byEvents.seq, length: byEvents.length });
      expect(loaded.commandsFrom).toBeDefined();
    }
    // Whole on every 4th message (the labels' message at position 2, then 6 and 10: one get); between, the get and the messages
    // from the one named (by a get each over a span of up to 4 sequences, else one replay), never those before it.
    expect(kinds.map((k) => k === 'DIRECT.GET')).toEqual([false, false, false, true, false, false, false, true]);
    for (const k of kinds) expect(k).toMatch(/^DIRECT\.GET(\+DIRECT\.GET){0,3}$|^DIRECT\.GET\+CONSUMER\.CREATE$/);
  });

  test('command ids whose read stops short of the carried state (a replica behind) come from a load by the events', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const run = (name: string, payload: unknown) => backbone.bus.execute({ name, payload, actor: 'test' });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await run('metal.enroll', enrollPayload('n1'));
    const first = await run('metal.setMaintenance', { nodeId: 'n1', on: true, reason: 'fan' });
    const last = await run('metal.setMaintenance', { nodeId: 'n1', on: false });
    // A store whose first read of a subject's messages stops one short of the end, as a replica catching up would.
    let reads = 0;
    const store = Object.create(backbone.store, {
      entriesAfter: {
        value: async function* (...args: Parameters<EventStore['entriesAfter']>) {
          const entries = [];
          for await (const entry of backbone.store.entriesAfter(...args)) entries.push(entry);
          yield* reads++ === 0 ? entries.slice(0, -1) : entries;
        },
      },
    }) as EventStore;
    const reader = new AggregateRepository(store);
    const carried = await reader.load(nodeAggregate, 'n1');
    expect(carried).toMatchObject({ seq: last.seq, commandsFrom: expect.any(Number) });

    const complete = await reader.withCommands(nodeAggregate, 'n1', carried);
    expect(complete).toMatchObject({ seq: last.seq, length: 3, state: { maintenance: false } });
    expect(complete.commandsFrom).toBeUndefined();
    for (const { commandId, seq } of [first, last]) expect(complete.commands.get(commandId)?.seq).toBe(seq);
    expect(reader.cachedOrInitial(nodeAggregate, 'n1')).toBe(complete);
  });
});
