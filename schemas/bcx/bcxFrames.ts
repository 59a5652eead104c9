import { BCX_MAX_FRAME_BYTES } from './bcxProtocol.ts';

/** A frame: 4-byte big-endian length, then the JSON. */
export function encodeBcxFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  if (body.length > BCX_MAX_FRAME_BYTES) throw new RangeError(`bcx frame of ${body.length} bytes is over ${BCX_MAX_FRAME_BYTES}`);
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

export class BcxFrameError extends Error {
  override name = 'BcxFrameError';
}

/**
 * Cuts a byte stream into frames, whatever the chunks' boundaries; each frame's JSON is parsed (not validated: the
 * reader checks it against the schema it expects). Throws on an oversized frame or JSON that does not parse: the
 * stream is then out of step for good, and the peer is stopped.
 */
export class BcxFrameReader {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): unknown[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const frames: unknown[] = [];
    while (this.#pending.length >= 4) {
      const length = this.#pending.readUInt32BE(0);
      if (length > BCX_MAX_FRAME_BYTES) throw new BcxFrameError(`bcx frame of ${length} bytes is over ${BCX_MAX_FRAME_BYTES}`);
      if (this.#pending.length < 4 + length) break;
      const body = this.#pending.subarray(4, 4 + length).toString('utf8');
      this.#pending = this.#pending.subarray(4 + length);
      try {
        frames.push(JSON.parse(body));
      } catch {
        throw new BcxFrameError('bcx frame is not JSON');
      }
    }
    return frames;
  }
}
