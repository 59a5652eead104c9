import type { JetStreamManager } from '@nats-io/jetstream';
import { DeadLetter, type DeadLetterPage } from '../../../schemas/deadLetters.ts';
import { Streams, Subjects } from '../../../schemas/subjects.ts';
import { unavailableOnFailure } from '../errors.ts';

const UNAVAILABLE = 'the dead letter stream is unavailable';

export interface DeadLetterCounts {
  readonly total: number;
  readonly byConsumer: Readonly<Record<string, number>>;
}

/**
 * What operators see of `BC_DEAD_LETTERS`: counts of open entries per consumer, pages of open or handled entries, and
 * marking entries handled. Nothing here deletes an entry: a dead letter is the forensic record of a forged or broken
 * message, so handling it moves it to its handled subject with who and when; the stream's own limits (30 days,
 * 100,000 entries) are what end it.
 */
export class DeadLetterReader {
  readonly #stream = Streams.deadLetters.name;

  constructor(private readonly jsm: JetStreamManager) {}

  /** Open entries only: what still needs someone's look. */
  async counts(): Promise<DeadLetterCounts> {
    const info = await unavailableOnFailure(this.jsm.streams.info(this.#stream, { subjects_filter: Subjects.openDeadLetters() }), UNAVAILABLE);
    const byConsumer: Record<string, number> = {};
    let total = 0;
    for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
      const consumer = subject.split('.')[2]!;
      byConsumer[consumer] = (byConsumer[consumer] ?? 0) + n;
      total += n;
    }
    return { total, byConsumer };
  }

  /** Entries after `afterSeq` (a position in `BC_DEAD_LETTERS`), oldest first, of one consumer or all, open or handled. */
  async page(options: { consumer?: string; afterSeq: number; limit: number; handled?: boolean }): Promise<DeadLetterPage> {
    const filter = options.handled ? Subjects.handledDeadLetters(options.consumer) : Subjects.openDeadLetters(options.consumer);
    const items: DeadLetterPage['items'] = [];
    for (let next = options.afterSeq + 1; items.length < options.limit;) {
      const msg = await unavailableOnFailure(this.jsm.direct.getMessage(this.#stream, { next_by_subj: filter, seq: next }), UNAVAILABLE);
      if (!msg) return { items };
      const entry = DeadLetter.safeParse(msg.json());
      if (entry.success) items.push({ ...entry.data, seq: msg.seq });
      next = msg.seq + 1;
    }
    return { items, nextAfterSeq: items.at(-1)!.seq };
  }

  /**
   * Marks the open entries of one consumer (or all) handled by `actor`: each is stored again, with `handled`, on its
   * handled subject before its open one is cleared, so an interrupted call loses nothing and a repeat finishes it.
   * Answers how many it marked.
   */
  async markHandled(actor: string, consumer?: string): Promise<number> {
    let marked = 0;
    for (let afterSeq = 0; ;) {
      const page = await this.page({ ...(consumer ? { consumer } : {}), afterSeq, limit: 100 });
      const at = new Date().toISOString();
      for (const { seq: _seq, ...entry } of page.items) {
        const handled: DeadLetter = { ...entry, handled: { at, by: actor } };
        await unavailableOnFailure(
          this.jsm.jetstream().publish(Subjects.handledDeadLetter(entry.consumer, entry.streamSeq), JSON.stringify(handled)),
          UNAVAILABLE,
        );
        await unavailableOnFailure(this.jsm.streams.purge(this.#stream, { filter: Subjects.deadLetter(entry.consumer, entry.streamSeq) }), UNAVAILABLE);
        marked++;
      }
      if (page.nextAfterSeq === undefined) return marked;
      afterSeq = page.nextAfterSeq;
    }
  }
}
