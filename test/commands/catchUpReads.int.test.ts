import { describe, expect, test, vi } from 'vitest';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { startBackbone } from '../support/backboneFixture.ts';

/**
 * A process catching up on an aggregate another process moved reads the last message, and takes the state it carries
 * (`aggregateState.ts`). By the events alone (a state under another fold version, or none), it walks back from the one
 * it names as its predecessor to the message it holds, by the predecessor each names: each message decoded once, not
 * one read more, and no consumer, however many messages of other subjects lie in between.
 */
describe('catching up on an aggregate another process appended to', () => {
  test('reads each missed message once and the last one once', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const run = (name: string, payload: unknown) => backbone.bus.execute({ name, payload, actor: 'test' });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await run('metal.enroll', enrollPayload('n1'));
    const reader = new AggregateRepository(backbone.store);
    const held = await reader.load(nodeAggregate, 'n1');

    // Another process moves n1 three times, with messages of other subjects in between.
    await run('metal.setMaintenance', { nodeId: 'n1', on: true, reason: 'fan' });
    for (const other of ['n2', 'n4', 'n5']) await run('metal.enroll', enrollPayload(other));
    await run('metal.setMaintenance', { nodeId: 'n1', on: false });
    await run('metal.enroll', enrollPayload('n3'));
    const last = await run('metal.setMaintenance', { nodeId: 'n1', on: true, reason: 'psu' });

    const gets = vi.spyOn(backbone.store.jsm.direct, 'getMessage');
    const requests = vi.spyOn(backbone.nc, 'request');
    const decoded = vi.spyOn(backbone.store, 'decode');
    // Three messages behind, with its command ids: it catches up by the events, not the last message's carried state
    // (which would leave the ids to read again).
    const caughtUp = await reader.load(nodeAggregate, 'n1');
    // The last message by a direct get, then the two before it by one exact get each (no replay's consumer).
    expect(gets).toHaveBeenCalledTimes(3);
    expect(requests).toHaveBeenCalledTimes(3);
    // Each message once: the last one, then n1's two before it, newest first (other nodes' enrolments lie between
    // them, more sequences than the old rule read by a direct get each: it replayed them).
    expect(decoded.mock.calls.map(([m]) => m.seq)).toEqual([last.seq, held.seq + 5, held.seq + 1]);
    for (const spy of [gets, requests, decoded]) spy.mockRestore();
    expect(caughtUp.seq).toBe(last.seq);
    expect(caughtUp.seq).toBeGreaterThan(held.seq);
    expect(caughtUp.state).toMatchObject({ exists: true, maintenance: true, maintenanceReason: 'psu' });
    expect(caughtUp.state).toEqual((await new AggregateRepository(backbone.store).load(nodeAggregate, 'n1')).state);

    // With the state the last message carries: that message's one get, whatever lies before it.
    const carriedGets = vi.spyOn(backbone.store.jsm.direct, 'getMessage');
    const carried = await new AggregateRepository(backbone.store).load(nodeAggregate, 'n1');
    expect(carriedGets).toHaveBeenCalledTimes(1);
    carriedGets.mockRestore();
    expect(carried).toMatchObject({ seq: caughtUp.seq, length: caughtUp.length, state: caughtUp.state });
  });

  test('replays a long gap at once: the last message tells how many messages the subject holds', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const run = (name: string, payload: unknown) => backbone.bus.execute({ name, payload, actor: 'test' });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await run('metal.enroll', enrollPayload('n1'));
    const reader = new AggregateRepository(backbone.store);
    const held = await reader.load(nodeAggregate, 'n1');
    expect(held.length).toBe(1);

    // Another process moves n1 six times, with another node's messages in between.
    for (let i = 0; i < 6; i++) {
      await run('metal.setMaintenance', { nodeId: 'n1', on: i % 2 === 0, reason: `r${i}` });
      await run('metal.enroll', enrollPayload(`m${i}`));
    }
    const last = await backbone.store.lastEntry('bc.evt.metal.node.n1');
    expect(last).toMatchObject({ held: false, entry: { position: 7 } });

    const requests = vi.spyOn(backbone.nc, 'request');
    const caughtUp = await reader.load(nodeAggregate, 'n1', 'replica', { carried: false });
    // The last message by a direct get; it says 5 messages lie between it and the held one, more than the walk reads
    // by exact gets: one replay's consumer reads them, without the gets first.
    expect(requests.mock.calls.map(([subject]) => subject.split('.').slice(0, 4).join('.'))).toEqual(['$JS.API.DIRECT.GET', '$JS.API.CONSUMER.CREATE']);
    requests.mockRestore();
    expect(caughtUp.length).toBe(7);
    expect(caughtUp.seq).toBe(last!.seq);
    expect(caughtUp.state).toEqual((await new AggregateRepository(backbone.store).load(nodeAggregate, 'n1')).state);
  });
});
