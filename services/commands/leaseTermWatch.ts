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

/** How often the watch checks that this process runs, and the gap that counts as having been stopped. */
const TICK_MS = 100;
const STALL_MS = 500;

/**
 * The term each leader lease is at, as a watch on the lease bucket delivers it: the takeover and every renewal (a
 * leader renews every third of its lease). A term counts as current only while it is fresh: received within half its
 * lease by this process's clock, while this process was running (its ticker never missed `STALL_MS` since, nor in the
 * half lease before). A leader that went silent (the only way a lease changes hands), a stalled watch, or a process
 * of ours that was itself stopped (SIGSTOP, a long pause: what it then reads from its socket is old, however recently
 * it is processed) all drop back to reading the lease. The watch starts on first use and restarts after it ends.
 */
export class LeaseTermWatch {
  readonly #terms = new Map<string, Watched>();
  #watching = false;
  #lastTickMs = 0;
  /** When a gap between ticks last showed this process had been stopped or blocked. */
  #stalledAtMs = 0;

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
    const now = this.now();
    const watched = this.#terms.get(service);
    if (!watched || !this.running(now) || now - watched.seenAtMs > watched.leaseMs / 2) return undefined;
    // After a stop the socket may hold a backlog read over several turns of the loop: for half a lease nothing
    // received counts as fresh, while the backlog (and any takeover in it) is worked through.
    if (watched.seenAtMs - this.#stalledAtMs <= watched.leaseMs / 2) return undefined;
    return watched.term;
  }

  /** Whether this process ran without a stop up to now (its ticker ran lately); notes the stop otherwise. */
  private running(now: number): boolean {
    if (now - this.#lastTickMs <= STALL_MS) return true;
    this.#stalledAtMs = now;
    return false;
  }

  private async watch(): Promise<void> {
    const ticker = setInterval(() => {
      const now = this.now();
      if (now - this.#lastTickMs > STALL_MS) this.#stalledAtMs = now;
      this.#lastTickMs = now;
    }, TICK_MS).unref();
    // A new watch's first entries are the last values, however old: like after a stop, half a lease passes first.
    this.#stalledAtMs = this.#lastTickMs = this.now();
    try {
      const entries = await (await this.bucket()).watch();
      for await (const entry of entries) this.apply(entry);
    } catch (err) {
      this.log.debug({ err }, 'lease watch ended; lease stamps are checked by reads until it runs again');
    } finally {
      // Nothing seen by an ended watch is trusted: the next check reads, and starts a new watch.
      clearInterval(ticker);
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
    const now = this.now();
    // An entry processed after a stop may have waited in the socket all along: it is not known to be fresh.
    if (!this.running(now)) this.#stalledAtMs = now;
    this.#terms.set(entry.key, { term: record.term || entry.revision, leaseMs: record.leaseMs, seenAtMs: now });
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
