import { execFileSync } from 'node:child_process';

/** Pids of the nats-server processes whose command line names `dir`: the embedded server of the stack using it. */
export function embeddedNatsPids(dir: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', `nats-server .*${dir}`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}
