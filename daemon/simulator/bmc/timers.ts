/**
 * Delayed state changes (power, media, tasks) go through here so `close()` can cancel them: a stray timer
 * firing after a test ended would mutate a dead simulator and keep the worker alive.
 */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();

  after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      fn();
    }, ms);
    this.pending.add(timer);
  }

  clear(): void {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }
}
