/**
 * `open` runs on first use and its result is kept for every later use; a failed open is forgotten, so the next use
 * opens again. Keeping the rejected promise instead would fail every later use with the first error for the life of
 * the process (e.g. a bucket first opened while nats-server restarts).
 */
export function openOnFirstUse<T>(open: () => Promise<T>): () => Promise<T> {
  let opened: Promise<T> | undefined;
  return () =>
    (opened ??= open().catch((err: unknown) => {
      opened = undefined;
      throw err;
    }));
}
