/** A satisfiable single byte range (inclusive end), 'unsatisfiable', or undefined to serve the whole file. */
export type ByteRange = { start: number; end: number } | 'unsatisfiable' | undefined;

/**
 * Parses an HTTP `Range` header (RFC 9110 §14.1.2) for one range: `bytes=a-b`, `bytes=a-`, `bytes=-n`. Multiple
 * ranges or other units are ignored (the whole file is served), which the RFC permits.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}
