import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TICKS = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far, from /proc; undefined off Linux. */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return undefined;
  }
}

/** The pid of the nats-server started by `startNatsServer`, from its ports file name. */
export function natsServerPid(storeDir: string): number | undefined {
  const file = readdirSync(join(storeDir, 'ports')).find((f) => /^nats-server_\d+\.ports$/.test(f));
  return file ? Number(/_(\d+)\./.exec(file)![1]) : undefined;
}

/** Starts counting CPU of this process and of `pids`; the returned function gives seconds used since. */
export function cpuMeter(pids: Record<string, number | undefined>): () => Record<string, number> {
  const self0 = process.cpuUsage();
  const base = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, pid === undefined ? undefined : processCpuSeconds(pid)]));
  return () => {
    const self = process.cpuUsage(self0);
    const out: Record<string, number> = { bench: (self.user + self.system) / 1e6 };
    for (const [k, pid] of Object.entries(pids)) {
      const now = pid === undefined ? undefined : processCpuSeconds(pid);
      const b = base[k];
      if (now !== undefined && b !== undefined) out[k] = Math.round((now - b) * 100) / 100;
    }
    out.bench = Math.round(out.bench! * 100) / 100;
    return out;
  };
}
