/**
 * Keeps commands and a key rotation apart: commands run side by side (`signing`), a rotation (`exclusive`) waits for
 * the running ones to finish and holds new ones until it settled. A result signed with the old key and verified
 * after the control plane switched keys would be refused, and the step would wait for an answer that never comes.
 */
export class SigningGate {
  #running = 0;
  #drained: (() => void) | undefined;
  #closed: Promise<void> | undefined;

  /** Runs `work` once no rotation is under way. */
  async signing<T>(work: () => Promise<T>): Promise<T> {
    while (this.#closed) await this.#closed;
    this.#running++;
    try {
      return await work();
    } finally {
      this.#running--;
      if (this.#running === 0) this.#drained?.();
    }
  }

  /** Runs `work` with no command running and none starting until it ends. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.#closed) await this.#closed;
    let open!: () => void;
    this.#closed = new Promise<void>((resolve) => (open = resolve));
    try {
      if (this.#running > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
      return await work();
    } finally {
      this.#drained = undefined;
      this.#closed = undefined;
      open();
    }
  }
}
