import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../projections/runtime/cursor.ts';
import { PlatformError } from '../../schemas/platformError.ts';

const refusal = (cursor: string) => {
  try {
    decodeCursor(cursor);
  } catch (err) {
    return err instanceof PlatformError ? err.code : err;
  }
  return undefined;
};

describe('cursor', () => {
  it('cursor round-trips a node id through an opaque base64url string', () => {
    const cursor = encodeCursor('n-0042');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]*$/);
    expect(decodeCursor(cursor)).toBe('n-0042');
  });

  it.each([
    ['standard base64 padding', `${Buffer.from('n1').toString('base64')}`],
    ['"+" and "/" of standard base64', Buffer.from([0xfb, 0xff]).toString('base64')],
    ['non-zero trailing bits', 'bjF'],
    ['characters outside the alphabet', 'bjE.'],
    ['embedded whitespace', 'bj E'],
    ['invalid UTF-8 bytes', Buffer.from([0xff, 0xfe]).toString('base64url')],
  ])('cursor refuses %s with VALIDATION_FAILED', (_name, cursor) => {
    expect(refusal(cursor)).toBe('VALIDATION_FAILED');
  });

  test.prop([fc.string({ unit: 'binary' })])('cursor decodes exactly what it encoded', (key) => {
    expect(decodeCursor(encodeCursor(key))).toBe(key);
  });

  test.prop([fc.string({ unit: fc.constantFrom(...'ABCabc019-_+/=. '.split('')), maxLength: 12 })])(
    'cursor accepts a string only when it is the canonical encoding of what it decodes to',
    (cursor) => {
      const code = refusal(cursor);
      if (code === undefined) expect(encodeCursor(decodeCursor(cursor))).toBe(cursor);
      else expect(code).toBe('VALIDATION_FAILED');
    },
  );
});
