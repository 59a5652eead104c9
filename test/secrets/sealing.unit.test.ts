import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SealedValue, sealingAad } from '../../schemas/secrets/sealed.ts';
import { MasterKey } from '../../services/secrets/masterKey.ts';
import { open, seal } from '../../services/secrets/sealing.ts';
import { thrownCode } from '../support/thrownCode.ts';

const key = new MasterKey(randomBytes(32));
const aad = sealingAad('bmc-r1-n1', 3);
/** Flips one bit of a base64 field. */
const flip = (base64: string, byte = 0) => {
  const b = Buffer.from(base64, 'base64');
  b[byte] = b[byte]! ^ 1;
  return b.toString('base64');
};

describe('sealing', () => {
  it('round-trips a value under the same key and aad', () => {
    const sealed = seal('{"username":"admin","password":"p4ss"}', key, aad);
    expect(SealedValue.parse(sealed)).toEqual(sealed);
    expect(sealed.keyId).toBe(key.keyId);
    expect(open(sealed, key, aad).toString('utf8')).toBe('{"username":"admin","password":"p4ss"}');
  });

  it('seals the same value differently each time (fresh IV) and never contains it', () => {
    const a = seal('same-plaintext-value', key, aad);
    const b = seal('same-plaintext-value', key, aad);
    expect(a.iv).not.toBe(b.iv);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(JSON.stringify(a)).not.toContain('same-plaintext-value');
  });

  it('refuses a tampered ciphertext, tag or iv with SECRET_UNSEALABLE', () => {
    const sealed = seal('tamper-me', key, aad);
    expect(thrownCode(() => open({ ...sealed, ciphertext: flip(sealed.ciphertext) }, key, aad))).toBe('SECRET_UNSEALABLE');
    expect(thrownCode(() => open({ ...sealed, tag: flip(sealed.tag, 15) }, key, aad))).toBe('SECRET_UNSEALABLE');
    expect(thrownCode(() => open({ ...sealed, iv: flip(sealed.iv, 11) }, key, aad))).toBe('SECRET_UNSEALABLE');
  });

  it('refuses a blob moved to another secret or version (wrong aad)', () => {
    const sealed = seal('bound-to-one-secret', key, aad);
    expect(thrownCode(() => open(sealed, key, sealingAad('bmc-r1-n2', 3)))).toBe('SECRET_UNSEALABLE');
    expect(thrownCode(() => open(sealed, key, sealingAad('bmc-r1-n1', 4)))).toBe('SECRET_UNSEALABLE');
  });

  it('refuses another master key, whether the key id says so or is relabelled', () => {
    const other = new MasterKey(randomBytes(32));
    const sealed = seal('for-key-one-only', key, aad);
    expect(thrownCode(() => open(sealed, other, aad))).toBe('SECRET_UNSEALABLE');
    // A blob relabelled with the other key's id still fails: GCM authenticates against the key itself.
    expect(thrownCode(() => open({ ...sealed, keyId: other.keyId }, other, aad))).toBe('SECRET_UNSEALABLE');
  });

  it('keeps the error free of the value', () => {
    const sealed = seal('do-not-echo-me', key, aad);
    try {
      open(sealed, key, sealingAad('x', 1));
      expect.unreachable();
    } catch (err) {
      expect(String((err as Error).message)).not.toContain('do-not-echo-me');
    }
  });
});
