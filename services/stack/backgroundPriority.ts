import { getPriority, setPriority } from 'node:os';

/**
 * Services whose work can wait for a free core: they converge or watch what the log already holds, and being late by
 * a few seconds under load costs nobody an answer. The command path (`commands`, `api`), the workflow engine and the
 * projectors are not among them: a caller or a step waits on each of those.
 */
const BACKGROUND_SERVICES: ReadonlySet<string> = new Set(['vps-reconciler', 'bmc-monitor', 'fleet-sensors', 'autonomy-engine']);

/**
 * Lowers this process's CPU priority to `backgroundNice` when every service it runs is a background one, so that under
 * a burst the kernel gives the cores to the command path first (measured with `npm run bench:vps`: the reconciler,
 * converging at full speed, took a core's worth of CPU from the commands processes during the burst). A process that
 * also serves the command path keeps its priority. Lowering one's own priority needs no privilege; called before
 * anything else starts, so the threads the process starts later inherit it. Only ever lowers: a process started
 * nicer than that stays as it is. Answers the nice value the process runs at when it is a background one.
 */
export function yieldCpuIfBackground(
  services: readonly string[],
  backgroundNice: number,
  priority: { get(): number; set(nice: number): void } = { get: () => getPriority(), set: (nice) => setPriority(nice) },
): number | undefined {
  const background = backgroundNice > 0 && services.length > 0 && services.every((s) => BACKGROUND_SERVICES.has(s));
  if (!background) return undefined;
  const current = priority.get();
  if (current >= backgroundNice) return current;
  priority.set(backgroundNice);
  return backgroundNice;
}
