import type { KV, KvEntry } from '@nats-io/kv';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaseTermWatch } from '../../services/commands/leaseTermWatch.ts';
import { createLogger } from '../../services/platform/logger.ts';

const LEASE_MS = 2_000;

/** A lease bucket whose watch delivers what the test pushes. */
function fakeBucket() {
  const waiting: ((entry: IteratorResult<KvEntry>) => void)[] = [];
  const queued: KvEntry[] = [];
  const entries: AsyncIterable<KvEntry> = {
    [Symbol.asyncIterator]: () => ({
      next: () => new Promise<IteratorResult<KvEntry>>((resolve) => (queued.length ? resolve({ value: queued.shift()!, done: false }) : waiting.push(resolve))),
    }),
  };
  const kv = { watch: async () => entries } as unknown as KV;
  let revision = 0;
  const push = (term: number, operation: 'PUT' | 'DEL' = 'PUT') => {
    const record = { service: 'workflow-orchestrator', holder: 'h', term, leaseMs: LEASE_MS, acquiredAt: 'x', renewedAt: 'x' };
    const entry = { key: 'workflow-orchestrator', operation, revision: ++revision, json: () => record } as unknown as KvEntry;
    const next = waiting.shift();
    if (next) next({ value: entry, done: false });
    else queued.push(entry);
  };
  return { kv, push };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(100_000);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LeaseTermWatch', () => {
  it('vouches for a freshly renewed term, not for one renewed too long ago, deleted, or received just after this process was stopped', async () => {
    const bucket = fakeBucket();
    const watch = new LeaseTermWatch(
      async () => bucket.kv,
      createLogger('lease-watch-test', 'silent'),
      () => Date.now(),
    );
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined();
    // A watch that just started trusts nothing for half a lease: its first entries are the last values, however old.
    bucket.push(7);
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined();
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    bucket.push(7);
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBe(7);
    expect(watch.freshTerm('bmc-monitor')).toBeUndefined();
    // No renewal for more than half a lease: the leader may be silent, only a read can tell.
    await vi.advanceTimersByTimeAsync(LEASE_MS / 2 + 100);
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined();
    bucket.push(7);
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBe(7);
    // Stopped (the clock moves, no timer runs): a renewal then read from the socket may be an old one.
    vi.setSystemTime(Date.now() + 3 * LEASE_MS);
    bucket.push(7);
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined();
    await vi.advanceTimersByTimeAsync(LEASE_MS / 4);
    bucket.push(7);
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined();
    await vi.advanceTimersByTimeAsync(LEASE_MS / 2);
    bucket.push(7);
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBe(7);
    // A takeover changes the term; a deleted key vouches for nothing.
    bucket.push(9);
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBe(9);
    bucket.push(9, 'DEL');
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined();
  });

  it('counts a short stop of this process as age: what it received around the stop is fresh for that much less, and stops add up', async () => {
    const bucket = fakeBucket();
    const watch = new LeaseTermWatch(
      async () => bucket.kv,
      createLogger('lease-watch-test', 'silent'),
      () => Date.now(),
    );
    watch.freshTerm('workflow-orchestrator');
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    const stop = async (ms: number) => {
      // Stopped (the clock moves, no timer runs), then a renewal read from the socket as it runs again.
      vi.setSystemTime(Date.now() + ms);
      bucket.push(7);
      for (let i = 0; i < 20; i++) await Promise.resolve();
    };
    // Stopped 550 ms (a host that lent its CPU elsewhere; up to one tick more since the last tick): the renewal may
    // be that old, so it counts for what is left of the half lease.
    await stop(550);
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined(); // no tick since: still stopped
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBe(7);
    await vi.advanceTimersByTimeAsync(200);
    expect(watch.freshTerm('workflow-orchestrator')).toBe(7);
    await vi.advanceTimersByTimeAsync(200); // 500 ms after it was received, plus the stop: over half a lease
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined();
    // A second stop within the half lease adds to the first: together more than half a lease, nothing counts.
    await stop(550);
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBeUndefined();
    // Half a lease after the stops, a renewal counts for the whole half lease again.
    await vi.advanceTimersByTimeAsync(LEASE_MS / 2);
    bucket.push(7);
    await vi.advanceTimersByTimeAsync(100);
    expect(watch.freshTerm('workflow-orchestrator')).toBe(7);
    await vi.advanceTimersByTimeAsync(LEASE_MS / 2 - 200);
    expect(watch.freshTerm('workflow-orchestrator')).toBe(7);
  });
});
