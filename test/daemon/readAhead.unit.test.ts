import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { BatchedWriter } from '../../daemon/ramdisk/batchedWriter.ts';
import { readAhead } from '../../daemon/ramdisk/readAhead.ts';

const dir = mkdtempSync(join(tmpdir(), 'bc-read-ahead-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the ramdisk reads and writes a disk in pieces with the next one in flight', () => {
  test.prop([fc.integer({ min: 0, max: 70_000 }), fc.integer({ min: 1, max: 9_000 })], { numRuns: 40 })(
    'readAhead hands over every byte once, in order, at its offset, though its two buffers are reused',
    async (length, chunk) => {
      const bytes = randomBytes(length);
      const file = join(dir, `r-${length}-${chunk}`);
      writeFileSync(file, bytes);
      const handle = await open(file, 'r');
      const seen: Buffer[] = [];
      const offsets: number[] = [];
      try {
        await readAhead(handle, length, chunk, async (piece, offset) => {
          offsets.push(offset);
          // Copied, and a turn of the event loop taken while the next read is in flight into the other buffer.
          seen.push(Buffer.from(piece));
          await new Promise((r) => setImmediate(r));
        });
      } finally {
        await handle.close();
      }
      expect(Buffer.concat(seen).equals(bytes)).toBe(true);
      expect(offsets).toEqual(Array.from({ length: Math.ceil(length / chunk) }, (_, i) => i * chunk));
    },
  );

  it('a failing check stops the read and its error reaches the caller, with no unhandled read left behind', async () => {
    const file = join(dir, 'stop');
    writeFileSync(file, randomBytes(5 << 20));
    const handle = await open(file, 'r');
    let calls = 0;
    await expect(
      readAhead(handle, 5 << 20, 1 << 20, () => {
        calls += 1;
        if (calls === 2) throw new Error('not zero');
      }),
    ).rejects.toThrow('not zero');
    await handle.close();
    expect(calls).toBe(2);
  });

  test.prop([fc.array(fc.integer({ min: 1, max: 3 << 20 }), { minLength: 1, maxLength: 8 })], { numRuns: 15 })(
    'BatchedWriter writes exactly the bytes added, in order, gathering chunks into batches without copying them',
    async (sizes) => {
      const chunks = sizes.map((n) => randomBytes(n));
      const file = join(dir, `w-${sizes.join('-')}`.slice(0, 60));
      writeFileSync(file, '');
      const handle = await open(file, 'r+');
      try {
        const writer = new BatchedWriter(handle, 0);
        for (const chunk of chunks) await writer.add(chunk);
        await writer.drain();
        const total = Buffer.concat(chunks);
        const back = Buffer.alloc(total.length);
        await handle.read(back, 0, total.length, 0);
        expect(back.equals(total)).toBe(true);
      } finally {
        await handle.close();
      }
    },
  );

  test.prop([fc.array(fc.integer({ min: 1, max: 1 << 20 }), { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 300_000 })], { numRuns: 20 })(
    'BatchedWriter goes on after short writes, from the byte where the disk stopped',
    async (sizes, most) => {
      const chunks = sizes.map((n) => randomBytes(n));
      const total = Buffer.concat(chunks);
      const disk = Buffer.alloc(total.length + 16);
      // A disk that takes at most `most` bytes per call, as a pwritev interrupted by a signal does.
      const shortWriter = {
        async writev(buffers: Uint8Array[], position: number) {
          let at = position;
          for (const b of buffers) {
            const n = Math.min(b.length, position + most - at);
            disk.set(b.subarray(0, n), at);
            at += n;
            if (n < b.length) break;
          }
          return { bytesWritten: at - position, buffers };
        },
      } as unknown as FileHandle;
      const writer = new BatchedWriter(shortWriter, 16);
      for (const chunk of chunks) await writer.add(chunk);
      await writer.drain();
      expect(disk.subarray(16).equals(total)).toBe(true);
    },
  );

  test('BatchedWriter fails as DRIVER_ERROR where the disk takes no byte, instead of trying forever', async () => {
    const full = { writev: async (buffers: Uint8Array[]) => ({ bytesWritten: 0, buffers }) } as unknown as FileHandle;
    const writer = new BatchedWriter(full, 0);
    await writer.add(randomBytes(5 << 20));
    await expect(writer.drain()).rejects.toMatchObject({ code: 'DRIVER_ERROR' });
  });
});
