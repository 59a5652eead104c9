import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealedValue } from '../../schemas/secrets/sealed.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { MasterKey } from './masterKey.ts';

/**
 * Seals `plaintext` with AES-256-GCM under the master key: a random 96-bit IV per value, the 128-bit tag, and `aad`
 * (see `sealingAad`) authenticated alongside so the blob only opens for the secret and version it was sealed for.
 */
export function seal(plaintext: string | Buffer, key: MasterKey, aad: string): SealedValue {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.bytes(), iv).setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext), cipher.final()]);
  return {
    alg: 'A256GCM',
    keyId: key.keyId,
    iv: iv.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

/**
 * Opens a sealed value. Throws SECRET_UNSEALABLE when it was sealed under another master key, for another secret or
 * version (`aad`), or was altered; the error never carries any part of the value.
 */
export function open(sealed: SealedValue, key: MasterKey, aad: string): Buffer {
  if (sealed.keyId !== key.keyId) {
    throw new PlatformError('SECRET_UNSEALABLE', `sealed under master key ${sealed.keyId}; this process holds ${key.keyId}`);
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.bytes(), Buffer.from(sealed.iv, 'base64'))
      .setAAD(Buffer.from(aad, 'utf8'))
      .setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
  } catch (cause) {
    throw new PlatformError('SECRET_UNSEALABLE', 'the sealed value does not authenticate for this secret and version', { cause });
  }
}
