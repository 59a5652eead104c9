/**
 * SQLite's answer for a file that is not (or no longer) a sound database: rebuild it, retrying cannot help. Lives in
 * the base layer because both the projectors (which rebuild) and the problem mapping (which answers 503) ask it.
 */
export function isCorruptDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}
