import { readFileSync } from 'node:fs';

/** Resident memory of one process in MiB: its peak (`VmHWM`) and its current size (`VmRSS`). */
export interface ProcessMemory {
  peakMiB: number;
  rssMiB: number;
}

/** `VmHWM` and `VmRSS` from /proc/<pid>/status; undefined once the process is gone (or off Linux). */
export function processMemory(pid: number): ProcessMemory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const peak = kib('VmHWM');
  const rss = kib('VmRSS');
  if (!Number.isFinite(peak) || !Number.isFinite(rss)) return undefined;
  return { peakMiB: Math.round(peak / 102.4) / 10, rssMiB: Math.round(rss / 102.4) / 10 };
}

/**
 * The memory of named processes through a run. The kernel keeps each process's peak (`VmHWM`), so the peak is exact
 * as long as the process is read before it exits; sampling every few seconds keeps the last reading of a process that
 * exits early (a crash), whose line then shows what it had reached.
 */
export class MemoryMeter {
  readonly #last = new Map<string, ProcessMemory>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly pids: Record<string, number>,
    intervalMs = 5_000,
  ) {
    this.sample();
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.#timer.unref();
  }

  sample(): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      const now = processMemory(pid);
      if (now) this.#last.set(name, now);
    }
  }

  /** Stops sampling; one last reading first, so `rssMiB` is each process's size at the end of the run. */
  stop(): Record<string, ProcessMemory> {
    this.sample();
    clearInterval(this.#timer);
    return Object.fromEntries(this.#last);
  }
}
