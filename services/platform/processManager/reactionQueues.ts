/**
 * Reactions queued per key: one key's run one after another (in the order they were queued), different keys
 * concurrently. Knows how many wait per key, so a resync can skip a key that already has one coming.
 */
export class ReactionQueues {
  readonly #queues = new Map<string, { tail: Promise<unknown>; pending: number }>();
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  /** `limit`: reactions running at once across keys (a reaction waiting for a slot still counts as its key's). */
  constructor(private readonly limit = Infinity) {}

  run(key: string, task: () => Promise<void>): Promise<void> {
    const queue = this.#queues.get(key) ?? { tail: Promise.resolve(), pending: 0 };
    queue.pending++;
    this.#queues.set(key, queue);
    const limited = this.limit === Infinity ? task : () => this.withinLimit(task);
    const result = queue.tail.then(limited, limited);
    queue.tail = result
      .catch(() => undefined)
      .finally(() => {
        if (--queue.pending === 0 && this.#queues.get(key) === queue) this.#queues.delete(key);
      });
    return result;
  }

  private async withinLimit(task: () => Promise<void>): Promise<void> {
    while (this.#running >= this.limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#running++;
    try {
      await task();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  /** Whether the key has a reaction waiting or running. */
  busy(key: string): boolean {
    return (this.#queues.get(key)?.pending ?? 0) > 0;
  }

  /** Resolves once every reaction queued so far has settled. */
  async idle(): Promise<void> {
    while (this.#queues.size > 0) await Promise.all([...this.#queues.values()].map((q) => q.tail));
  }
}
