import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BcxFrameError, BcxFrameReader, encodeBcxFrame } from '../../schemas/bcx/bcxFrames.ts';
import { BCX_MAX_FRAME_BYTES } from '../../schemas/bcx/bcxProtocol.ts';

describe('bcx frames', () => {
  it('reads back every message, in order, however the byte stream is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 30 }), (messages, cuts) => {
        const bytes = Buffer.concat(messages.map(encodeBcxFrame));
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const reader = new BcxFrameReader();
        const read: unknown[] = [];
        let from = 0;
        for (const at of [...points, bytes.length]) {
          read.push(...reader.push(bytes.subarray(from, at)));
          from = at;
        }
        expect(read).toEqual(messages.map((m) => JSON.parse(JSON.stringify(m)) as unknown));
      }),
    );
  });

  it('refuses a frame over the limit from its length alone, and a body that is not JSON', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(BCX_MAX_FRAME_BYTES + 1);
    expect(() => new BcxFrameReader().push(header)).toThrow(BcxFrameError);
    const text = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from('{x}')]);
    expect(() => new BcxFrameReader().push(text)).toThrow(BcxFrameError);
    // A plugin's stray log line on stdout reads as a huge length.
    expect(() => new BcxFrameReader().push(Buffer.from('starting up...\n'))).toThrow(/over/);
  });
});
