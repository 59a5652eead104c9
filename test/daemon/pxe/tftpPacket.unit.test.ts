import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { PxeError } from '../../../daemon/site/pxe/pxeErrors.ts';
import { encodeTftpPacket, parseTftpPacket } from '../../../daemon/site/pxe/tftpPacket.ts';
import { rrqBytes } from './pxePackets.ts';

describe('TFTP packets', () => {
  it('reads a read request with blksize and tsize, names case-insensitive', () => {
    const packet = parseTftpPacket(rrqBytes('/undionly.kpxe', { BLKSIZE: '1428', tsize: '0' }));
    expect(packet).toEqual({
      op: 1,
      filename: '/undionly.kpxe',
      mode: 'octet',
      options: new Map([
        ['blksize', '1428'],
        ['tsize', '0'],
      ]),
    });
  });

  it('round-trips DATA, ACK, ERROR and OACK', () => {
    for (const packet of [
      { op: 3 as const, block: 65535, data: Buffer.from('abc') },
      { op: 4 as const, block: 7 },
      { op: 5 as const, code: 2, message: 'access violation' },
      { op: 6 as const, options: new Map([['blksize', '1024']]) },
    ]) {
      expect(parseTftpPacket(encodeTftpPacket(packet))).toEqual(packet);
    }
  });

  it.each([
    ['a two-byte datagram', Buffer.from([0, 1])],
    ['an unknown opcode', Buffer.from([0, 9, 0, 0])],
    ['a request without its final NUL', rrqBytes('a', {}).subarray(0, -1)],
    ['a request without a mode', Buffer.from([0, 1, 0x61, 0])],
    ['an option without a value', Buffer.concat([rrqBytes('a'), Buffer.from('blksize\0', 'latin1')])],
    ['a repeated option', Buffer.concat([rrqBytes('a', { blksize: '512' }), Buffer.from('blksize\x001024\0', 'latin1')])],
    ['an ACK of the wrong length', Buffer.from([0, 4, 0, 1, 0])],
  ])('refuses %s with TFTP_MALFORMED', (_, bytes) => {
    expect(() => parseTftpPacket(bytes)).toThrow(expect.objectContaining({ code: 'TFTP_MALFORMED' }));
  });

  test.prop([fc.uint8Array({ maxLength: 200 })], { numRuns: 500 })('throws nothing but TFTP_MALFORMED on random bytes', (bytes) => {
    try {
      parseTftpPacket(Buffer.from(bytes));
    } catch (err) {
      expect(err).toBeInstanceOf(PxeError);
    }
  });
});
