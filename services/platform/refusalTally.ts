import { COUNTED_SOURCE_MAX, COUNTED_SOURCES_MAX, type CountedSource, type RefusalCount } from '../../schemas/refusals.ts';

export interface RefusalTallyOptions {
  /** Length of one window. Default 60 s. */
  windowMs?: number;
  /** Refusals that may leave a record of their own in one window, all sources together. Default 20. */
  recordsPerWindow?: number;
  /** Sources counted apart in one window; refusals of any further source are only summed. Default 1,000. */
  sourcesPerWindow?: number;
}

/** One request's place in the tally: whether a refusal of it may be recorded, and what became of it. */
export interface RefusalTicket {
  /** A refusal of this request may leave an event of its own; otherwise it is counted. */
  readonly record: boolean;
  /** It was refused (with a record of its own when `record`, else counted). */
  refused(reason: string): void;
  /** It was not refused: the record it was allowed goes back to its source. */
  passed(): void;
}

interface Window {
  readonly startMs: number;
  /** Sources that hold a record in this window (one each). */
  readonly recorded: Set<string>;
  readonly counted: Map<string, Map<string, number>>;
  otherSources: number;
  firstMs: number;
  lastMs: number;
}

/**
 * Keeps refusals from growing the log with an attacker's attempts. In each window, the first refusal of a source
 * may be recorded (an event with its details, for the operator), up to `recordsPerWindow` of them; every other
 * refusal is counted, and `take` hands the counts of the windows that ended out as one bounded `RefusalCount`. The
 * log then grows by at most `recordsPerWindow + 1` entries per window, whatever the rate of refusals, and memory by
 * at most `sourcesPerWindow` sources. Each refusal is either recorded or counted, exactly once.
 */
export class RefusalTally {
  readonly #windowMs: number;
  readonly #recordsPerWindow: number;
  readonly #sourcesPerWindow: number;
  #window: Window | undefined;
  /** Counts of windows that ended and were not taken yet. */
  #ended: RefusalCount | undefined;

  constructor(options: RefusalTallyOptions = {}) {
    this.#windowMs = options.windowMs ?? 60_000;
    this.#recordsPerWindow = options.recordsPerWindow ?? 20;
    this.#sourcesPerWindow = options.sourcesPerWindow ?? 1_000;
  }

  get windowMs(): number {
    return this.#windowMs;
  }

  /**
   * A request from `source` that may be refused. The record is reserved at once, so concurrent requests of one
   * source cannot all be granted one.
   */
  admit(named: string, nowMs: number): RefusalTicket {
    // A source may be a name the refused party chose: cut to what a count keeps, and never empty.
    const source = named.slice(0, COUNTED_SOURCE_MAX) || 'unnamed';
    const window = this.#current(nowMs);
    const record = !window.recorded.has(source) && window.recorded.size < this.#recordsPerWindow;
    if (record) window.recorded.add(source);
    let settled = false;
    return {
      record,
      refused: (reason) => {
        if (settled) return;
        settled = true;
        if (!record) this.#count(source, reason, nowMs);
      },
      passed: () => {
        if (settled) return;
        settled = true;
        // A window that ended since has nothing to give back.
        if (record && this.#window === window) window.recorded.delete(source);
      },
    };
  }

  /**
   * The refusals counted (not recorded) in windows that ended by `nowMs`, or also in the running one when `final`
   * (a stopping service), as one count; undefined when there are none.
   */
  take(nowMs: number, options: { final?: boolean } = {}): RefusalCount | undefined {
    this.#roll(nowMs);
    if (options.final && this.#window) this.#end(this.#window);
    const ended = this.#ended;
    this.#ended = undefined;
    return ended;
  }

  #current(nowMs: number): Window {
    this.#roll(nowMs);
    this.#window ??= { startMs: nowMs, recorded: new Set(), counted: new Map(), otherSources: 0, firstMs: Infinity, lastMs: -Infinity };
    return this.#window;
  }

  #roll(nowMs: number): void {
    if (this.#window && nowMs >= this.#window.startMs + this.#windowMs) this.#end(this.#window);
  }

  #end(window: Window): void {
    this.#window = undefined;
    const count = countOf(window);
    if (count) this.#ended = this.#ended ? merged(this.#ended, count) : count;
  }

  #count(source: string, reason: string, nowMs: number): void {
    const window = this.#current(nowMs);
    window.firstMs = Math.min(window.firstMs, nowMs);
    window.lastMs = Math.max(window.lastMs, nowMs);
    let reasons = window.counted.get(source);
    if (!reasons) {
      if (window.counted.size >= this.#sourcesPerWindow) {
        window.otherSources += 1;
        return;
      }
      reasons = new Map();
      window.counted.set(source, reasons);
    }
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

/** The busiest sources named, the rest summed. */
function bounded(sources: CountedSource[], otherSources: number): Pick<RefusalCount, 'sources' | 'otherSources' | 'refused'> {
  const sorted = [...sources].sort((a, b) => b.refused - a.refused || a.source.localeCompare(b.source));
  const named = sorted.slice(0, COUNTED_SOURCES_MAX);
  const others = otherSources + sum(sorted.slice(COUNTED_SOURCES_MAX).map((s) => s.refused));
  return { sources: named, otherSources: others, refused: sum(named.map((s) => s.refused)) + others };
}

function countOf(window: Window): RefusalCount | undefined {
  if (window.counted.size === 0 && window.otherSources === 0) return undefined;
  const sources = [...window.counted].map(([source, reasons]) => ({ source, refused: sum(reasons.values()), reasons: Object.fromEntries(reasons) }));
  return { from: new Date(window.firstMs).toISOString(), to: new Date(window.lastMs).toISOString(), ...bounded(sources, window.otherSources) };
}

function merged(a: RefusalCount, b: RefusalCount): RefusalCount {
  const bySource = new Map<string, CountedSource>();
  for (const s of [...a.sources, ...b.sources]) {
    const seen = bySource.get(s.source);
    if (!seen) {
      bySource.set(s.source, { ...s, reasons: { ...s.reasons } });
      continue;
    }
    seen.refused += s.refused;
    for (const [reason, n] of Object.entries(s.reasons)) seen.reasons[reason] = (seen.reasons[reason] ?? 0) + n;
  }
  return { from: a.from < b.from ? a.from : b.from, to: a.to > b.to ? a.to : b.to, ...bounded([...bySource.values()], a.otherSources + b.otherSources) };
}
