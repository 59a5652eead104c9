import { machineCpuSeconds, processCpuSeconds } from '../cpuMeter.ts';

/** CPU seconds (utime + stime from /proc/<pid>/stat) of named processes, as one snapshot. */
export type CpuSnapshot = Record<string, number>;

export function snapshot(pids: Record<string, number>): CpuSnapshot {
  const out: CpuSnapshot = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = processCpuSeconds(pid) ?? 0;
  out['(whole machine)'] = machineCpuSeconds() ?? 0;
  return out;
}

/** CPU seconds each process used between two snapshots (a process gone by `b` keeps its last reading in `b`). */
export function delta(a: CpuSnapshot, b: CpuSnapshot): CpuSnapshot {
  return Object.fromEntries(Object.keys(a).map((k) => [k, Math.round(((b[k] ?? a[k]!) - a[k]!) * 100) / 100]));
}

export const sum = (cpu: CpuSnapshot, names: readonly string[]) => Math.round(names.reduce((s, n) => s + (cpu[n] ?? 0), 0) * 100) / 100;
