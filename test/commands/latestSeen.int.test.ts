import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { AggregateRepository, LATEST_SEEN_MAX_AGE_MS } from '../../services/platform/commands/aggregateRepository.ts';
import { siteAggregate } from '../../services/site/site/site.ts';
import { startBackbone } from '../support/backboneFixture.ts';

/**
 * `latestSeen` answers a dependency from what this process saw, for at most LATEST_SEEN_MAX_AGE_MS: another
 * process's change (here: a site another bus created) reaches it within that bound, and an aggregate with no message
 * is remembered too, instead of a direct get per command.
 */
describe('AggregateRepository.latestSeen', () => {
  let backbone: Awaited<ReturnType<typeof startBackbone>>;
  beforeAll(async () => {
    backbone = await startBackbone({ projectors: false });
  });
  afterAll(async () => {
    await backbone[Symbol.asyncDispose]();
  });

  test('reads the log again once what it holds is older than the bound, and sees what another process wrote', async () => {
    let now = 1_000_000;
    const repository = new AggregateRepository(backbone.store, 1_000, () => now);
    const reads = vi.spyOn(backbone.store, 'lastEntry');

    expect((await repository.latestSeen(siteAggregate, 'dc-seen')).state.exists).toBe(false);
    expect((await repository.latestSeen(siteAggregate, 'dc-seen')).state.exists).toBe(false);
    expect(reads).toHaveBeenCalledTimes(1);

    // Another process creates the site: within the bound this one may still answer what it saw, never longer.
    await backbone.bus.execute({ name: 'site.create', payload: { siteId: 'dc-seen', name: 'Seen' }, actor: 'test' });
    now += LATEST_SEEN_MAX_AGE_MS;
    expect((await repository.latestSeen(siteAggregate, 'dc-seen')).state.exists).toBe(false);
    expect(reads).toHaveBeenCalledTimes(1);
    now += 1;
    expect((await repository.latestSeen(siteAggregate, 'dc-seen')).state.exists).toBe(true);
    expect(reads).toHaveBeenCalledTimes(2);

    // A read that finds the same message again restarts the bound without folding anything.
    now += LATEST_SEEN_MAX_AGE_MS + 1;
    const again = await repository.latestSeen(siteAggregate, 'dc-seen');
    expect(again.state.exists).toBe(true);
    expect(reads).toHaveBeenCalledTimes(3);
    await repository.latestSeen(siteAggregate, 'dc-seen');
    expect(reads).toHaveBeenCalledTimes(3);
    reads.mockRestore();
  });

  test('load always asks the log, whatever the bound', async () => {
    const repository = new AggregateRepository(backbone.store);
    const reads = vi.spyOn(backbone.store, 'lastEntry');
    await repository.load(siteAggregate, 'dc-loaded');
    await repository.load(siteAggregate, 'dc-loaded');
    expect(reads).toHaveBeenCalledTimes(2);
    reads.mockRestore();
  });
});
