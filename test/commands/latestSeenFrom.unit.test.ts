import { describe, expect, it } from 'vitest';
import { AggregateRepository, LATEST_SEEN_MAX_AGE_MS } from '../../services/platform/commands/aggregateRepository.ts';
import type { EventStore, ReadFrom } from '../../services/platform/eventStore/eventStore.ts';
import { ramdiskBootAggregate } from '../../services/trust/ramdiskBoot/ramdiskBoot.ts';

/** A log of a replicated stream with no message on any subject: it records where each read of a last message went. */
function emptyLog() {
  const reads: ReadFrom[] = [];
  const store = {
    readsMayLag: true,
    lastEntry: async (_subject: string, _held?: number, from: ReadFrom = 'replica') => void reads.push(from),
  } as unknown as EventStore;
  return { store, reads };
}

describe('AggregateRepository.latestSeen', () => {
  it('answers the copy the log confirmed within 1 s, and sends a read that is due where it is told', async () => {
    let now = 1_000_000;
    const { store, reads } = emptyLog();
    const repository = new AggregateRepository(store, 100, () => now);

    await repository.latestSeen(ramdiskBootAggregate, 'wf-1-s1-a1', 'leader');
    now += LATEST_SEEN_MAX_AGE_MS;
    await repository.latestSeen(ramdiskBootAggregate, 'wf-1-s1-a1', 'leader');
    expect(reads).toEqual(['leader']);

    now += 1;
    await repository.latestSeen(ramdiskBootAggregate, 'wf-1-s1-a1', 'leader');
    now += LATEST_SEEN_MAX_AGE_MS + 1;
    await repository.latestSeen(ramdiskBootAggregate, 'wf-1-s1-a1');
    expect(reads).toEqual(['leader', 'leader', 'replica']);
  });
});
