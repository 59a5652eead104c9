import type { FileHandle } from 'node:fs/promises';

const CHUNK = 4 << 20;

/**
 * Gathers the HTTP body's small chunks into 4 MiB writes, with one write in flight while the next batch fills: a
 * positional write per network chunk costs a syscall (and, under emulation, a world switch) per 16-64 KiB.
 */
export class BatchedWriter {
  #buffer = Buffer.allocUnsafe(CHUNK);
  #fill = 0;
  #at: number;
  #inFlight: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly handle: FileHandle,
    at: number,
  ) {
    this.#at = at;
  }

  async add(chunk: Uint8Array): Promise<void> {
    for (let offset = 0; offset < chunk.length;) {
      const n = Math.min(chunk.length - offset, CHUNK - this.#fill);
      this.#buffer.set(chunk.subarray(offset, offset + n), this.#fill);
      this.#fill += n;
      offset += n;
      if (this.#fill === CHUNK) await this.#flush();
    }
  }

  async #flush(): Promise<void> {
    await this.#inFlight;
    if (this.#fill === 0) return;
    const write = this.handle.write(this.#buffer, 0, this.#fill, this.#at);
    // Awaited at the next flush or at drain; until then a failure must not count as unhandled.
    write.catch(() => undefined);
    this.#inFlight = write;
    this.#at += this.#fill;
    this.#buffer = Buffer.allocUnsafe(CHUNK);
    this.#fill = 0;
  }

  /** Every byte added is on its way to the disk (not yet fsynced). */
  async drain(): Promise<void> {
    await this.#flush();
    await this.#inFlight;
  }
}
