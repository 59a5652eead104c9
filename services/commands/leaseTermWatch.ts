import { performance } from 'node:perf_hooks';
import type { KV, KvEntry } from '@nats-io/kv';
import { LeaseRecord } from '../../schemas/lease.ts';
import type { Logger } from '../platform/logger.ts';

interface Watched {
  term: number;
  leaseMs: number;
  /** When this process received the entry (its own monotonic clock). */
  seenAtMs: number;
}

/**
 * The term each leader lease is at, as a watch on the lease bucket delivers it: the takeover and every renewal (a
 * leader renews every third of its lease). A term counts as current only while it is fresh, renewed or taken within
 * half its lease by this process's clock: a watch that stalls, or a leader that went silent (the only way a lease
 * changes hands), drops back to reading the lease. The watch starts on first use and restarts after it ends.
 */
export class LeaseTermWatch {
  readonly #terms = new Map<string, Watched>();
  #watching = false;

  constructor(
    private readonly bucket: () => Promise<KV>,
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The term `service`'s lease is at, when the watch says so with a fresh entry; undefined when only a read can tell. */
  freshTerm(service: string): number | undefined {
    if (!this.#watching) {
      this.#watching = true;
      void this.watch();
    }
    const watched = this.#terms.get(service);
    if (!watched || this.now() - watched.seenAtMs > watched.leaseMs / 2) return undefined;
    return watched.term;
  }

  private async watch(): Promise<void> {
    try {
      const entries = await (await this.bucket()).watch();
      for await (const entry of entries) this.apply(entry);
    } catch (err) {
      this.log.debug({ err }, 'lease watch ended; lease stamps are checked by reads until it runs again');
    } finally {
      // Nothing seen by an ended watch is trusted: the next check reads, and starts a new watch.
      this.#terms.clear();
      this.#watching = false;
    }
  }

  private apply(entry: KvEntry): void {
    const record = entry.operation === 'PUT' ? recordOf(entry) : undefined;
    if (!record) {
      this.#terms.delete(entry.key);
      return;
    }
    this.#terms.set(entry.key, { term: record.term || entry.revision, leaseMs: record.leaseMs, seenAtMs: this.now() });
  }
}

function recordOf(entry: KvEntry): LeaseRecord | undefined {
  let value: unknown;
  try {
    value = entry.json();
  } catch {
    return undefined;
  }
  const parsed = LeaseRecord.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
