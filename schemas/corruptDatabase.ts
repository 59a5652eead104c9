/**
 * SQLite's answer for a file that is not (or no longer) a sound database: rebuild it, retrying cannot help. Lives in
 * the contract, the one layer below all who ask it: the projectors (which rebuild), the read models' readers (which
 * answer UNAVAILABLE) and the problem mapping (which answers 503). A pure test of an error's code; it does no I/O.
 */
export function isCorruptDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}
