import type { StoredEvent } from '../../../schemas/envelope.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import type { EventStore, LastEntry, LogEntry, ReadFrom } from '../eventStore/eventStore.ts';
import { appliedCommand, carriedSnapshot, type AggregateSnapshot, type StateAfter } from './aggregateSnapshot.ts';
import { decodeCarriedState, encodeCarriedState, wholeStateChars } from './aggregateState.ts';
import { RememberedCommands } from './rememberedCommands.ts';
import { resolveAggregate, type AggregateDefinition, type AggregateSource, type DomainEventLike } from './commandDefinition.ts';

export type { AggregateSnapshot } from './aggregateSnapshot.ts';

/** Messages a held snapshot may be behind the last one and still catch up by the events (exact gets: `entriesEndingAt`). */
const CATCH_UP_BY_EVENTS_UP_TO = 4;

/** How old a snapshot `latestSeen` answers may be: read from the log, or written by this process, that long ago at most. */
export const LATEST_SEEN_MAX_AGE_MS = 1_000;

const emptySnapshot = <S>(aggregate: AggregateDefinition<S, any>): AggregateSnapshot<S> => ({
  state: aggregate.initialState,
  seq: 0,
  length: 0,
  commands: RememberedCommands.none,
});

interface Cached {
  readonly snapshot: AggregateSnapshot<unknown>;
  /** When the log last agreed with it (a read) or this process wrote it (an append). */
  readonly checkedAtMs: number;
}

/**
 * Aggregate state cached in memory keyed by the last applied sequence. A load costs one direct get of the
 * subject's last message; only messages newer than the cached sequence are read and folded (the last one comes with
 * that get, and the ones before it only when it was not appended right after the cached sequence: walked back by
 * exact gets, a few at most, then one replay). Messages the event store did not write are skipped (the projectors
 * and process managers dead-letter them).
 */
export class AggregateRepository {
  readonly #cache = new Map<string, Cached>();

  constructor(
    private readonly store: EventStore,
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  subjectOf(aggregate: AggregateDefinition<any, any>, id: string): string {
    return Subjects.aggregateEvents(aggregate.module, aggregate.type, id);
  }

  /**
   * The aggregate as of this read. A `replica` read that shows less than this process already holds, or a message
   * whose predecessor it did not return, came from a replica still catching up (on a cluster): it is read again at
   * the stream leader, so a load never answers older than what this process saw, nor a state with a message left out.
   */
  async load<S>(source: AggregateSource<S>, id: string, from: ReadFrom = 'replica', options: { carried?: boolean } = {}): Promise<AggregateSnapshot<S>> {
    const aggregate = resolveAggregate(source);
    const subject = this.subjectOf(aggregate, id);
    // Undefined when this read was the leader's already.
    const behind = () => (from === 'leader' || !this.store.readsMayLag ? undefined : this.load(aggregate, id, 'leader', options));
    // The direct get of the last message carries the whole message, not just its sequence: when it is the only one
    // after the cached sequence (its MAC-covered expected sequence says so), it is folded without another read.
    const held = this.#cache.get(subject)?.snapshot as AggregateSnapshot<S> | undefined;
    // The log agreed with what this read returns at least as late as its start.
    const readAt = this.now();
    const last = await this.store.lastEntry(subject, held?.seq, from);
    if (!last) {
      if (held?.seq === 0) return this.confirmed(subject, held, readAt);
      // A log without the messages this process holds: a replica behind, or (the leader says so) a replaced stream.
      const fromLeader = held ? await behind() : undefined;
      // An aggregate with no message is remembered too, so `latestSeen` need not ask again for one that does not exist.
      return fromLeader ?? this.remember(subject, emptySnapshot(aggregate), readAt);
    }
    // The log's last message is the one the held snapshot ends with: it is the state as of this read.
    if (last.held) return this.confirmed(subject, held!, readAt);
    const lastSeq = last.seq;
    let snapshot = held;
    if (snapshot && snapshot.seq > lastSeq) {
      // Only the leader's word says the log was truncated or replaced: start over from it.
      const fromLeader = await behind();
      if (fromLeader) return fromLeader;
      snapshot = undefined;
    }
    // The state the last message carries stands for every message up to it: no other read (unless told to fold them).
    // A held snapshot with its command ids and at most a few messages behind catches up by their gets instead: the
    // carried state would leave the command ids to read again, from up to 143 messages back.
    const behindBy =
      snapshot && snapshot.commandsFrom === undefined && last.entry.position !== undefined ? last.entry.position - 1 - snapshot.length : undefined;
    const carried =
      options.carried === false || last.previousSeq === (snapshot?.seq ?? 0) || (behindBy !== undefined && behindBy <= CATCH_UP_BY_EVENTS_UP_TO)
        ? undefined
        : await this.fromCarried(aggregate, subject, last, from);
    if (carried) return this.remember(subject, carried, readAt);
    snapshot ??= emptySnapshot(aggregate);
    if (last.previousSeq !== snapshot.seq) {
      // The read ends at the message the last one names as its predecessor (the subject holds nothing between the
      // two), and walks back from it by the predecessor each message names: a short aggregate loads by a few exact
      // gets, a long one by one replay, at once when the last message's position says how many are missing (older
      // messages have none). A last message that names no predecessor (rejected) is read up to by `entriesAfter`.
      const missing = last.entry.position === undefined ? undefined : last.entry.position - 1 - snapshot.length;
      const read =
        last.previousSeq === undefined
          ? this.store.entriesAfter(subject, snapshot.seq, lastSeq - 1, from)
          : this.store.entriesEndingAt(subject, snapshot.seq, last.previousSeq, from, missing);
      for await (const entry of read) snapshot = this.foldEntry(aggregate, snapshot, entry);
      // Every message the store wrote names the one before it on the subject: a read that did not reach it missed some.
      if (last.previousSeq !== undefined && snapshot.seq !== last.previousSeq) {
        const fromLeader = await behind();
        if (fromLeader) return fromLeader;
        throw new PlatformError('UNAVAILABLE', `the log of ${subject} ends at ${lastSeq} but its read stopped at ${snapshot.seq}`);
      }
    }
    return this.remember(subject, this.foldEntry(aggregate, snapshot, last.entry), readAt);
  }

  /**
   * The aggregate, read again at the stream leader when `accepts` refuses what the first read shows: a replica that
   * has not caught up with what another process just appended (an agent's registration, a workflow's next step) must
   * not be the reason a request is refused. With one replica the first read was the leader's already.
   */
  loadAccepting<S>(source: AggregateSource<S>, id: string, accepts: (state: S) => boolean): Promise<AggregateSnapshot<S>> {
    return this.judged(
      source,
      id,
      (snapshot) => snapshot,
      (snapshot) => accepts(snapshot.state),
    );
  }

  /**
   * `judge`'s verdict on the aggregate, judged again on the stream leader's read when `accepted` refuses the first
   * (see `loadAccepting`): for a verdict that costs something to reach (a signature check) and says more than yes or no.
   */
  async judged<S, V>(source: AggregateSource<S>, id: string, judge: (snapshot: AggregateSnapshot<S>) => V, accepted: (verdict: V) => boolean): Promise<V> {
    const first = judge(await this.load(source, id));
    return accepted(first) || !this.store.readsMayLag ? first : judge(await this.load(source, id, 'leader'));
  }

  /** The cached snapshot, trusted without asking the log; the initial state for an aggregate this process never saw. */
  cachedOrInitial<S>(aggregate: AggregateDefinition<S, any>, id: string): AggregateSnapshot<S> {
    const cached = this.#cache.get(this.subjectOf(aggregate, id))?.snapshot as AggregateSnapshot<S> | undefined;
    return cached ?? emptySnapshot(aggregate);
  }

  /**
   * The snapshot the last message's carried state gives, when the current fold wrote it: the state itself, or (a
   * large state, carried every few messages) the one it names, read with the messages after it in one request and
   * folded. Undefined when there is none to use, or the read did not reach the last message's predecessor: the caller
   * then reads the events.
   */
  private async fromCarried<S>(
    aggregate: AggregateDefinition<S>,
    subject: string,
    last: LastEntry & { held: false },
    from: ReadFrom,
  ): Promise<AggregateSnapshot<S> | undefined> {
    const whole = carriedSnapshot(aggregate, last.entry);
    if (whole !== 'named') return whole;
    const stateAt = (decodeCarriedState(aggregate, last.entry.state!, last.seq) as { stateAt: number }).stateAt;
    if (last.previousSeq === undefined || stateAt > last.previousSeq) return undefined;
    let snapshot: AggregateSnapshot<S> | undefined;
    for await (const entry of this.store.entriesAfter(subject, stateAt - 1, last.previousSeq, from)) {
      if (snapshot) snapshot = this.foldEntry(aggregate, snapshot, entry);
      else {
        const named = entry.seq === stateAt ? carriedSnapshot(aggregate, entry) : undefined;
        if (named === undefined || named === 'named') return undefined;
        snapshot = named;
      }
    }
    return snapshot?.seq === last.previousSeq ? this.foldEntry(aggregate, snapshot, last.entry) : undefined;
  }

  /**
   * `snapshot` with the command ids it remembers: read, when it came from a carried state, from the messages they are
   * in (one request: `commandsFrom` is at most 143 messages back). Its state and sequence are the log's through
   * `snapshot.seq`, so a read that does not reach it (a replica behind; a message deleted since) loads the aggregate
   * afresh by its events instead, at the leader where one may lag.
   */
  async withCommands<S>(source: AggregateSource<S>, id: string, snapshot: AggregateSnapshot<S>, from: ReadFrom = 'replica'): Promise<AggregateSnapshot<S>> {
    if (snapshot.commandsFrom === undefined) return snapshot;
    const aggregate = resolveAggregate(source);
    const subject = this.subjectOf(aggregate, id);
    let commands = RememberedCommands.none;
    let reached = 0;
    for await (const entry of this.store.entriesAfter(subject, snapshot.commandsFrom - 1, snapshot.seq, from)) {
      reached = entry.seq;
      if (!entry.rejection) commands = commands.with(entry.batch.events[0]!.metadata.commandId, appliedCommand(entry.seq, entry.batch.events));
    }
    if (reached !== snapshot.seq) {
      // Not from the cache either: it holds this very snapshot, which the load would confirm or fold onto.
      this.#cache.delete(subject);
      return this.load(aggregate, id, this.store.readsMayLag ? 'leader' : from, { carried: false });
    }
    const complete: AggregateSnapshot<S> = { state: snapshot.state, seq: snapshot.seq, length: snapshot.length, commands, carriedAt: snapshot.carriedAt };
    const cached = this.#cache.get(subject);
    if (cached?.snapshot === snapshot) this.#cache.set(subject, { snapshot: complete, checkedAtMs: cached.checkedAtMs });
    return complete;
  }

  /**
   * The state after `events` are folded onto `base`, and the value its message carries (`aggregateState.ts`; undefined
   * when the aggregate carries none, the state is too large, or `base` has not read its command ids: the message
   * could not say where they begin).
   */
  stateAfter<S>(aggregate: AggregateDefinition<S>, base: AggregateSnapshot<S>, events: readonly StoredEvent[]): StateAfter<S> {
    let state = base.state;
    for (const stored of events) state = aggregate.evolve(state, { type: stored.type, data: stored.data });
    const encoded =
      base.commandsFrom === undefined
        ? encodeCarriedState(aggregate, state, base.length + 1, base.carriedAt, base.commands.oldestKeptWithOneMore())
        : undefined;
    return { state, carried: encoded?.value, wholeChars: encoded?.chars };
  }

  /**
   * A message the event store did not write (or cannot read) never reaches the state, yet it is the subject's last
   * message until the next append, so the snapshot moves past it: the next append expects its sequence.
   */
  private foldEntry<S>(aggregate: AggregateDefinition<S>, snapshot: AggregateSnapshot<S>, entry: LogEntry): AggregateSnapshot<S> {
    if (entry.rejection) return { ...snapshot, seq: entry.seq, length: snapshot.length + 1 };
    const chars = entry.state === undefined ? undefined : wholeStateChars(aggregate, entry.state);
    return this.fold(aggregate, snapshot, entry.seq, entry.batch.events, undefined, undefined, chars);
  }

  /**
   * The state this process last saw, without asking the log when the log agreed with it (or this process wrote it)
   * within `LATEST_SEEN_MAX_AGE_MS`; else `load`. For preconditions on facts that do not go back (a site that exists
   * keeps existing) this saves a round trip per command, and bounds how late another process's change is seen (the
   * approvers an operator just set, a plugin just registered). `from` is where a read that is due goes.
   */
  async latestSeen<S>(source: AggregateSource<S>, id: string, from: ReadFrom = 'replica'): Promise<AggregateSnapshot<S>> {
    const aggregate = resolveAggregate(source);
    const cached = this.#cache.get(this.subjectOf(aggregate, id));
    return cached && this.now() - cached.checkedAtMs <= LATEST_SEEN_MAX_AGE_MS ? (cached.snapshot as AggregateSnapshot<S>) : this.load(aggregate, id, from);
  }

  /**
   * Records a message this process just appended, so the next load needs no read beyond the sequence check. Its events
   * were validated at the current version by `catalog.write` just before: they are folded as they are, not parsed again.
   */
  applyAppended<S>(
    aggregate: AggregateDefinition<S>,
    id: string,
    base: AggregateSnapshot<S>,
    seq: number,
    events: StoredEvent[],
    folded?: StateAfter<S>,
  ): AggregateSnapshot<S> {
    const snapshot = this.fold(aggregate, base, seq, events, (stored) => ({ type: stored.type, data: stored.data }), folded, folded?.wholeChars);
    this.remember(this.subjectOf(aggregate, id), snapshot);
    return snapshot;
  }

  private fold<S>(
    aggregate: AggregateDefinition<S, DomainEventLike>,
    base: AggregateSnapshot<S>,
    seq: number,
    events: StoredEvent[],
    read: (stored: StoredEvent) => DomainEventLike = (stored) => aggregate.catalog.read(stored),
    folded?: { state: S },
    /** Characters of the whole state the message carries, when it carries it. */
    wholeChars?: number,
  ): AggregateSnapshot<S> {
    let state = base.state;
    if (folded) state = folded.state;
    else for (const stored of events) state = aggregate.evolve(state, read(stored));
    const length = base.length + 1;
    const carriedAt = wholeChars === undefined ? base.carriedAt : { seq, length, chars: wholeChars };
    const { commandsFrom } = base;
    // Ids not read yet stay unread: `withCommands` reads them all, through this message, from where they begin.
    if (commandsFrom !== undefined) return { state, seq, length, commands: base.commands, commandsFrom, carriedAt };
    return { state, seq, length, commands: base.commands.with(events[0]!.metadata.commandId, appliedCommand(seq, events)), carriedAt };
  }

  /** The log agreed with `snapshot` just now: `latestSeen` may answer it again (unless a newer one was cached meanwhile). */
  private confirmed<S>(subject: string, snapshot: AggregateSnapshot<S>, checkedAtMs: number): AggregateSnapshot<S> {
    const cached = this.#cache.get(subject);
    if (cached?.snapshot === snapshot) this.#cache.set(subject, { snapshot, checkedAtMs });
    return snapshot;
  }

  private remember<S>(subject: string, snapshot: AggregateSnapshot<S>, checkedAtMs = this.now()): AggregateSnapshot<S> {
    this.#cache.delete(subject);
    this.#cache.set(subject, { snapshot, checkedAtMs });
    if (this.#cache.size > this.maxEntries) this.#cache.delete(this.#cache.keys().next().value!);
    return snapshot;
  }
}
