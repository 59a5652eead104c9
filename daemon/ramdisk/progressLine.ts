import type { ExecutionContext } from '../agent/commandRunner.ts';

/** A progress line at most this often (and at the end): a percentage a second is all a reader follows. */
const PROGRESS_EVERY_MS = 1_000;

const MiB = 1 << 20;

/**
 * Reports `done` of `total` bytes of `what` to the node's log as `progress` lines ("wipe vda: 42% (420 of 1000 MiB)"),
 * at most once a second and once more when done. Disk names only, never a URL or a param.
 */
export function progressLine(ctx: ExecutionContext, what: string, total: number, now: () => number = Date.now): (done: number) => void {
  let last = Number.NEGATIVE_INFINITY;
  let finished = false;
  return (done) => {
    if (!ctx.output || finished) return;
    const end = done >= total;
    if (!end && now() - last < PROGRESS_EVERY_MS) return;
    last = now();
    finished = end;
    const percent = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 100;
    ctx.output('progress', `${what}: ${percent}% (${Math.floor(done / MiB)} of ${Math.floor(total / MiB)} MiB)`);
  };
}
