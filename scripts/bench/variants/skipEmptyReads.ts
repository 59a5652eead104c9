import type { EventStore, StoredBatch } from '../../../services/platform/eventStore/eventStore.ts';

/**
 * Bench stand-in for a proposed `AggregateRepository.load` change: read only when the subject's last sequence is
 * past the cached one, and stop at that sequence. Today `load` always calls `readAfter`, which for a new aggregate
 * (lastSeq 0, every `metal.enroll`) costs one extra direct get that finds nothing, and for any catch-up ends with
 * one more get that finds nothing. This wrapper remembers the last sequence `lastSequence` just returned per
 * subject and answers `readAfter` without a request when nothing is newer, which is what the fix would do.
 */
export function skipEmptyReads(store: EventStore): EventStore {
  const known = new Map<string, number>();
  const wrapped = Object.create(store) as EventStore;
  const lastSequence = store.lastSequence.bind(store);
  const readAfter = store.readAfter.bind(store);
  Object.assign(wrapped, {
    async lastSequence(subject: string): Promise<number> {
      const seq = await lastSequence(subject);
      known.set(subject, seq);
      return seq;
    },
    async *readAfter(subject: string, afterSeq: number): AsyncGenerator<StoredBatch> {
      const last = known.get(subject);
      known.delete(subject);
      if (last !== undefined && last <= afterSeq) return;
      for await (const stored of readAfter(subject, afterSeq)) {
        yield stored;
        if (last !== undefined && stored.seq >= last) return;
      }
    },
  });
  return wrapped;
}
