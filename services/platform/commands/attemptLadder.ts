import type { ReadFrom } from '../eventStore/eventStore.ts';

/**
 * Where a command's state comes from on each attempt: this process's cached guess, then any replica, then the stream
 * leader. Deciding on the guess asks the log nothing (a process that wrote an aggregate last reads nothing); the
 * append's expected sequence checks it. A replica may answer behind the log (on a cluster; with one replica it is the
 * leader), so a conflict on the append, or a refusal or no-op decided on a replica's read, climbs to the leader.
 */
export type Rung = 'guess' | ReadFrom;

/** What to do after the append met a conflict: decide again (after `backoffMs`, when given), or give up. */
export type AfterConflict = { readonly retry: false } | { readonly retry: true; readonly backoffMs?: number };

/** The longest wait between two attempts after conflicts, and the first one (doubled per conflict up to the longest). */
const MAX_BACKOFF_MS = 1_000;
const FIRST_BACKOFF_MS = 5;

/** One command's climb from guess to leader: a policy with no I/O, stepped by what each attempt's decision met. */
export class AttemptLadder {
  #rung: Rung = 'guess';
  /** Conflicts met after the guess: each one waits longer, and `retries` of them are the most retried. */
  #conflicts = 0;

  constructor(
    private readonly options: {
      /** The store's reads may come from a replica behind the leader (a stream with more than one replica). */
      readonly readsMayLag: boolean;
      readonly retries: number;
      readonly random?: () => number;
    },
  ) {}

  get rung(): Rung {
    return this.#rung;
  }

  /** Where this attempt reads: the guess reads nothing from the log, so what it reads lazily comes from a replica. */
  get from(): ReadFrom {
    return this.#rung === 'guess' ? 'replica' : this.#rung;
  }

  get guessing(): boolean {
    return this.#rung === 'guess';
  }

  /**
   * An answer other than an append (a refusal, a no-op) stands only on state no replica can have left behind: read at
   * the leader, or where every read is the leader's. A guess is never final: only an append is checked by the log.
   */
  get final(): boolean {
    return this.#rung === 'leader' || (this.#rung === 'replica' && !this.options.readsMayLag);
  }

  /**
   * After a refusal or a no-op: false when this rung is final (answer it); else climbs (guess to a replica, a replica
   * to the leader) and returns true (decide again there).
   */
  climbUnlessFinal(): boolean {
    if (this.final) return false;
    this.#rung = this.#rung === 'guess' ? 'replica' : 'leader';
    return true;
  }

  /**
   * After a conflict on the append: a guess is read again at once (a stale cache is what its expected sequence is
   * there to catch); a read is read again at the leader, after a random wait that doubles per conflict, up to
   * `retries` times.
   */
  afterConflict(): AfterConflict {
    if (this.#rung === 'guess') {
      this.#rung = 'replica';
      return { retry: true };
    }
    if (this.options.readsMayLag) this.#rung = 'leader';
    if (this.#conflicts >= this.options.retries) return { retry: false };
    const backoffMs = (this.options.random ?? Math.random)() * Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** this.#conflicts);
    this.#conflicts++;
    return { retry: true, backoffMs };
  }
}
