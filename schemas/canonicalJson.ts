/**
 * JSON with keys sorted at every level, so field order never makes two equal values differ: what request digests and
 * approved plan digests hash.
 */
export function canonicalJson(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(canonical(value) ?? null);
}
