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

/** CPU seconds all processes on the machine have used (busy time from /proc/stat); undefined off Linux. */
export function machineCpuSeconds(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return (user + nice + system + irq + softirq + steal) / TICKS;
  } catch {
    return undefined;
  }
}

/** The pid of the nats-server started by `startNatsServer`, from its ports file name. */
export function natsServerPid(storeDir: string): number | undefined {
  const file = readdirSync(join(storeDir, 'ports')).find((f) => /^nats-server_\d+\.ports$/.test(f));
  return file ? Number(/_(\d+)\./.exec(file)![1]) : undefined;
}

/** Other processes whose CPU time the bench reports next to its own (the nats-server, the API child). */
const metered = new Map<string, number>();

export function meterProcess(name: string, pid: number | undefined): void {
  if (pid === undefined) metered.delete(name);
  else metered.set(name, pid);
}

/**
 * Starts counting CPU of this process and of `pids` (default: the metered processes); the returned function gives
 * CPU seconds used since, per process.
 */
export function cpuMeter(pids: Record<string, number | undefined> = Object.fromEntries(metered)): () => Record<string, number> {
  const self0 = process.cpuUsage();
  const machine0 = machineCpuSeconds();
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
    // Everything else the machine did meanwhile (other users' builds and tests): the noise on these figures.
    const machine = machineCpuSeconds();
    if (machine !== undefined && machine0 !== undefined) {
      const ours = Object.values(out).reduce((a, b) => a + b, 0);
      out.other = Math.max(0, Math.round((machine - machine0 - ours) * 100) / 100);
    }
    return out;
  };
}
