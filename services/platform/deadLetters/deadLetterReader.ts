import type { JetStreamManager } from '@nats-io/jetstream';
import { DeadLetter, type DeadLetterPage } from '../../../schemas/deadLetters.ts';
import { Streams, Subjects } from '../../../schemas/subjects.ts';
import { unavailableOnFailure } from '../errors.ts';

const UNAVAILABLE = 'the dead letter stream is unavailable';

export interface DeadLetterCounts {
  readonly total: number;
  readonly byConsumer: Readonly<Record<string, number>>;
}

/** What operators see of `BC_DEAD_LETTERS`: counts per consumer, pages of entries, and clearing what they handled. */
export class DeadLetterReader {
  readonly #stream = Streams.deadLetters.name;

  constructor(private readonly jsm: JetStreamManager) {}

  async counts(): Promise<DeadLetterCounts> {
    const info = await unavailableOnFailure(this.jsm.streams.info(this.#stream, { subjects_filter: Subjects.allDeadLetters }), UNAVAILABLE);
    const byConsumer: Record<string, number> = {};
    for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
      const consumer = subject.split('.')[2]!;
      byConsumer[consumer] = (byConsumer[consumer] ?? 0) + n;
    }
    return { total: info.state.messages, byConsumer };
  }

  /** Entries after `afterSeq` (a position in `BC_DEAD_LETTERS`), oldest first, of one consumer or all. */
  async page(options: { consumer?: string; afterSeq: number; limit: number }): Promise<DeadLetterPage> {
    const filter = options.consumer ? Subjects.consumerDeadLetters(options.consumer) : Subjects.allDeadLetters;
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

  /** Removes the entries of one consumer (or all); answers how many went. */
  async purge(consumer?: string): Promise<number> {
    const response = await unavailableOnFailure(
      this.jsm.streams.purge(this.#stream, { filter: consumer ? Subjects.consumerDeadLetters(consumer) : Subjects.allDeadLetters }),
      UNAVAILABLE,
    );
    return response.purged;
  }
}
