import { PlatformError } from '../../schemas/platformError.ts';

/** Opaque page cursors: the last key of the previous page, base64url-encoded so clients do not parse it. */
export const encodeCursor = (key: string): string => Buffer.from(key, 'utf8').toString('base64url');

export function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (encodeCursor(key) !== cursor) throw new PlatformError('VALIDATION_FAILED', 'cursor is not one this API issued');
  return key;
}
