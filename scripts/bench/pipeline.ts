/** Runs `task(0..total-1)` with at most `inFlight` running at once, in index order. Rejects on the first failure. */
export async function pipelined(total: number, inFlight: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < total) {
      const i = next++;
      try {
        await task(i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, total) }, worker));
}
