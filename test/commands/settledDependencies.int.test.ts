import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { z } from 'zod';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { LATEST_SEEN_MAX_AGE_MS } from '../../services/platform/commands/aggregateRepository.ts';
import { defineCommand } from '../../services/platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { createSite } from '../../services/site/site/create.ts';
import { siteAggregate } from '../../services/site/site/site.ts';
import { startBackbone } from '../support/backboneFixture.ts';

/** Refuses unless the dependency site exists: decided on the `dep` site, loaded `settled` or not as the payload says. */
const needsSite = defineCommand({
  name: 'test.needsSite',
  exposure: ['engine'],
  schema: z.object({ siteId: z.string(), dep: z.string(), settled: z.boolean() }),
  aggregate: siteAggregate,
  aggregateId: (command) => command.siteId,
  dependencies: async (command, load) => load(siteAggregate, command.dep, { settled: command.settled }),
  decide(command, _state, { dependencies }) {
    if (!dependencies.exists) throw new DomainError('NOT_FOUND', `site ${command.dep} does not exist`);
    return [];
  },
});

/**
 * A `settled` dependency (only facts that never change once the aggregate exists are read) is answered from any
 * snapshot the process holds, however old; without one, and for every other dependency past the `latestSeen` bound,
 * the log is asked.
 */
describe('settled dependencies', () => {
  let backbone: Awaited<ReturnType<typeof startBackbone>>;
  beforeAll(async () => {
    backbone = await startBackbone({ projectors: false });
  });
  afterAll(async () => {
    await backbone[Symbol.asyncDispose]();
  });

  test('reads the log for a settled dependency only when the process holds no message of it', async () => {
    const bus = new CommandBus(backbone.store, [createSite, needsSite], { retries: 0 });
    const run = (name: string, payload: unknown) => bus.execute({ name, payload, actor: 'test' });
    const readsOf = (spy: { mock: { calls: unknown[][] } }, siteId: string) =>
      spy.mock.calls.filter(([subject]) => subject === `bc.evt.site.site.${siteId}`).length;
    await run('site.create', { siteId: 'dc-held', name: 'Held' });
    // Another process created these: the bus has not seen them.
    await backbone.bus.execute({ name: 'site.create', payload: { siteId: 'dc-other', name: 'Other' }, actor: 'test' });
    await backbone.bus.execute({ name: 'site.create', payload: { siteId: 'dc-unseen', name: 'Unseen' }, actor: 'test' });

    // Each command runs past the bound of everything read before it.
    const later = () => sleep(LATEST_SEEN_MAX_AGE_MS + 50);
    const reads = vi.spyOn(backbone.store, 'lastEntry');
    await later();
    await run('test.needsSite', { siteId: 'dc-other', dep: 'dc-held', settled: true });
    expect(readsOf(reads, 'dc-held')).toBe(0);
    await later();
    await run('test.needsSite', { siteId: 'dc-other', dep: 'dc-held', settled: false });
    expect(readsOf(reads, 'dc-held')).toBe(1);
    // Held nowhere in this process: the log is asked, and the site another process created is found.
    await later();
    await run('test.needsSite', { siteId: 'dc-held', dep: 'dc-unseen', settled: true });
    expect(readsOf(reads, 'dc-unseen')).toBe(1);
    reads.mockRestore();
  });
});
