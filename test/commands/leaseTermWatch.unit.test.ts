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
});
