import { closeSync, openSync, readSync } from 'node:fs';

/** The first `length` bytes of a simulated disk file (an image written there must match byte for byte). */
export function readPrefix(path: string, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, 0);
    return buffer;
  } finally {
    closeSync(fd);
  }
}
