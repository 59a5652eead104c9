import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ErrorCode } from '../../schemas/errorCodes.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { createPrivateFileOnce } from './privateFile.ts';

export const KEY_BYTES = 32;

/**
 * A 32-byte key: the base64 `value` when one is set (an environment variable), else the key `file`, created with a
 * random key and mode 0600 when missing (concurrent first starts agree on one). A malformed key fails with `code`,
 * and the message never quotes it.
 */
export function loadKeyMaterial(options: { value: string | undefined; valueName: string; file: string; code: ErrorCode }): Buffer {
  if (options.value !== undefined && options.value !== '') return decodeKey(options.value, options.valueName, options.code);
  createPrivateFileOnce(options.file, () => `${randomBytes(KEY_BYTES).toString('base64')}\n`);
  return decodeKey(readFileSync(options.file, 'utf8'), `key file ${options.file}`, options.code);
}

/** A key as an environment variable or key file holds it; throws `code` naming `source`, never quoting the text. */
export function decodeKey(text: string, source: string, code: ErrorCode): Buffer {
  const trimmed = text.trim();
  // Strict base64: Buffer.from would silently skip junk characters and hand back a different key.
  if (!/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) {
    throw new PlatformError(code, `${source} must be the base64 of ${KEY_BYTES} bytes (e.g. \`openssl rand -base64 32\`)`);
  }
  return Buffer.from(trimmed, 'base64');
}
