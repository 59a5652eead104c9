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
/** Stops remembered at most (a stop is noted at most once per tick). */
const STOPS_KEPT = 1_000;

/** A stop of this process: when it was noticed, and how long it lasted at most (the gap since the tick before it). */
interface Stop {
  atMs: number;
  /** The tick it followed: one stop, however many times it is noticed. */
  afterTickMs: number;
  gapMs: number;
}

/**
 * The term each leader lease is at, as a watch on the lease bucket delivers it: the takeover and every renewal (a
 * leader renews every third of its lease). A term counts as current only while it is fresh: received within half its
 * lease by this process's clock, while this process runs (its ticker did not miss `STALL_MS` just now), counting every
 * stop of this process from half a lease before it was received until now as age it may have had: what a stopped
 * process reads from its socket once it runs again may be as old as the stop (SIGSTOP, a long pause, a CPU it did not
 * get on a loaded host). A stop of half a lease or more, a leader that went silent (the only way a lease changes
 * hands) or a stalled watch all drop back to reading the lease; a stop of 600 ms only shortens how long what was
 * received around it counts, where it used to void it for half a lease (issue 34: under load nearly every stamped
 * command read the lease at the stream leader). The watch starts on first use and restarts after it ends.
 */
export class LeaseTermWatch {
  readonly #terms = new Map<string, Watched>();
  #watching = false;
  #lastTickMs = 0;
  /** The stops noticed lately (gaps between ticks that showed this process had been stopped or blocked), oldest first. */
  readonly #stops: Stop[] = [];

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
    if (!watched || !this.running(now)) return undefined;
    // After a stop the socket may hold a backlog read over several turns of the loop: what is received in the half
    // lease after it may be as old as the stop, so each stop from then on counts as age.
    const halfLease = watched.leaseMs / 2;
    let stoppedMs = 0;
    for (const stop of this.#stops) if (stop.atMs > watched.seenAtMs - halfLease) stoppedMs += stop.gapMs;
    return now - watched.seenAtMs + stoppedMs > halfLease ? undefined : watched.term;
  }

  /** Whether this process ran without a stop up to now (its ticker ran lately); notes the stop otherwise. */
  private running(now: number): boolean {
    if (now - this.#lastTickMs <= STALL_MS) return true;
    this.noteStop(now);
    return false;
  }

  /** Notes the stop that ends now (once per tick it followed, with its longest gap), forgetting the oldest. */
  private noteStop(now: number, gapMs = now - this.#lastTickMs): void {
    const last = this.#stops.at(-1);
    if (last && last.afterTickMs === this.#lastTickMs) {
      last.atMs = now;
      last.gapMs = Math.max(last.gapMs, gapMs);
    } else this.#stops.push({ atMs: now, afterTickMs: this.#lastTickMs, gapMs });
    if (this.#stops.length > STOPS_KEPT) this.#stops.shift();
  }

  private async watch(): Promise<void> {
    const ticker = setInterval(() => {
      const now = this.now();
      if (now - this.#lastTickMs > STALL_MS) this.noteStop(now);
      this.#lastTickMs = now;
    }, TICK_MS).unref();
    // A new watch's first entries are the last values, however old: like after a stop of unknown length, half a lease
    // passes first.
    this.#lastTickMs = this.now();
    this.noteStop(this.#lastTickMs, Infinity);
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
    this.running(now);
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
