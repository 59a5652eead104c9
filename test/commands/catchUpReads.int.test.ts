import { describe, expect, test, vi } from 'vitest';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { startBackbone } from '../support/backboneFixture.ts';

/**
 * A process catching up on an aggregate another process moved reads the last message, then each message it missed,
 * and stops at the one the last message names as its predecessor: not one read more, however many messages of other
 * subjects lie in between.
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
    await run('metal.enroll', enrollPayload('n2'));
    await run('metal.setMaintenance', { nodeId: 'n1', on: false });
    await run('metal.enroll', enrollPayload('n3'));
    const last = await run('metal.setMaintenance', { nodeId: 'n1', on: true, reason: 'psu' });

    const gets = vi.spyOn(backbone.store.jsm.direct, 'getMessage');
    const caughtUp = await reader.load(nodeAggregate, 'n1');
    // The last message, then the two before it.
    expect(gets).toHaveBeenCalledTimes(3);
    gets.mockRestore();
    expect(caughtUp.seq).toBe(last.seq);
    expect(caughtUp.seq).toBeGreaterThan(held.seq);
    expect(caughtUp.state).toMatchObject({ exists: true, maintenance: true, maintenanceReason: 'psu' });
    expect(caughtUp.state).toEqual((await new AggregateRepository(backbone.store).load(nodeAggregate, 'n1')).state);
  });
});
