import type { FileHandle } from 'node:fs/promises';
import { AgentError } from '../agent/errors.ts';

const BATCH_BYTES = 4 << 20;
/** Below Linux's IOV_MAX (1024): one `pwritev` takes the whole batch. */
const BATCH_CHUNKS = 1000;

/**
 * Gathers the HTTP body's small chunks into 4 MiB writes, with one write in flight while the next batch gathers: a
 * positional write per network chunk costs a syscall (and, under emulation, a world switch) per 16-64 KiB. A batch is
 * the chunks themselves, written with one `pwritev`, not a copy of them: copying every byte into a batch buffer was a
 * third pass over the image in guest memory beside the kernel's two (socket to user, user to page cache), and under
 * TCG each pass is slow enough that it cost the writer 0.59× `dd` (bench:site, `withoutFetchOrHash`).
 *
 * The writer keeps a reference to each chunk until its batch is on its way: a caller must not reuse a chunk's memory
 * before the `add` after the next one resolved, or `drain`. HTTP body chunks are fresh buffers; an image write also
 * reads back what it wrote and compares digests, so a chunk changed too early fails the write instead of passing.
 */
export class BatchedWriter {
  #batch: Uint8Array[] = [];
  #batchBytes = 0;
  #at: number;
  #inFlight: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly handle: FileHandle,
    at: number,
  ) {
    this.#at = at;
  }

  async add(chunk: Uint8Array): Promise<void> {
    if (chunk.length === 0) return;
    this.#batch.push(chunk);
    this.#batchBytes += chunk.length;
    if (this.#batchBytes >= BATCH_BYTES || this.#batch.length >= BATCH_CHUNKS) await this.#flush();
  }

  async #flush(): Promise<void> {
    // The previous batch's write is done once this resolves: its chunks are the caller's again.
    await this.#inFlight;
    if (this.#batchBytes === 0) return;
    const write = writeAll(this.handle, this.#batch, this.#at);
    // Awaited at the next flush or at drain; until then a failure must not count as unhandled.
    write.catch(() => undefined);
    this.#inFlight = write;
    this.#at += this.#batchBytes;
    this.#batch = [];
    this.#batchBytes = 0;
  }

  /** Every byte added is on its way to the disk (not yet fsynced). */
  async drain(): Promise<void> {
    await this.#flush();
    await this.#inFlight;
  }
}

/** `pwritev` until every byte is written: after a short write it goes on from where the disk stopped. */
async function writeAll(handle: FileHandle, chunks: readonly Uint8Array[], at: number): Promise<void> {
  let rest = chunks;
  let position = at;
  while (rest.length > 0) {
    const { bytesWritten } = await handle.writev(rest as Uint8Array[], position);
    // Nothing taken and no error: past the device's end, where going on would loop forever.
    if (bytesWritten === 0) throw new AgentError('DRIVER_ERROR', `the disk took none of the bytes at offset ${position}`);
    position += bytesWritten;
    let skip = bytesWritten;
    let i = 0;
    while (i < rest.length && skip >= rest[i]!.length) skip -= rest[i++]!.length;
    rest = i < rest.length ? [rest[i]!.subarray(skip), ...rest.slice(i + 1)] : [];
  }
}
