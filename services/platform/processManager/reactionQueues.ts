/**
 * Reactions queued per key: one key's run one after another (in the order they were queued), different keys
 * concurrently. Knows how many wait per key, so a resync can skip a key that already has one coming.
 */
export class ReactionQueues {
  readonly #queues = new Map<string, { tail: Promise<unknown>; pending: number }>();

  run(key: string, task: () => Promise<void>): Promise<void> {
    const queue = this.#queues.get(key) ?? { tail: Promise.resolve(), pending: 0 };
    queue.pending++;
    this.#queues.set(key, queue);
    const result = queue.tail.then(task, task);
    queue.tail = result
      .catch(() => undefined)
      .finally(() => {
        if (--queue.pending === 0 && this.#queues.get(key) === queue) this.#queues.delete(key);
      });
    return result;
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
