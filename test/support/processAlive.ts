import { readFileSync } from 'node:fs';

/** True while `pid` names a process that has not exited (a zombie, exited but not reaped, counts as gone). */
export function processAlive(pid: number | null | undefined): boolean {
  if (!pid) return false;
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}
