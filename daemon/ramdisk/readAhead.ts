import type { FileHandle } from 'node:fs/promises';

/**
 * Reads `length` bytes from offset 0 in `chunk`-sized pieces, the next piece's read in flight while `each` looks at
 * the current one (two buffers, reused): under emulation the device works on the host's I/O thread while the guest's
 * one CPU hashes or compares, so a read that waits for the check wastes both. `each` must not keep the buffer.
 */
export async function readAhead(
  handle: FileHandle,
  length: number,
  chunk: number,
  each: (bytes: Buffer, offset: number) => void | Promise<void>,
): Promise<void> {
  const buffers = [Buffer.allocUnsafe(chunk), Buffer.allocUnsafe(chunk)] as const;
  const readAt = (offset: number, slot: number) => handle.read(buffers[slot % 2]!, 0, Math.min(chunk, length - offset), offset);
  let pending = length > 0 ? readAt(0, 0) : undefined;
  for (let offset = 0, slot = 0; pending; offset += chunk, slot++) {
    const { bytesRead, buffer } = await pending;
    const next = offset + chunk;
    pending = next < length ? readAt(next, slot + 1) : undefined;
    // A failed read-ahead must not count as unhandled while the current piece is checked; it is awaited next.
    pending?.catch(() => undefined);
    await each(buffer.subarray(0, bytesRead), offset);
  }
}
