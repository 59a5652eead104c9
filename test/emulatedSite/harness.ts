import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { repoRoot } from '../../scripts/emulatedSite/buildOutput.ts';

/** Child processes of one emulated-site test, each with its output in a log file, stopped together. */
export class TestProcesses {
  readonly #children: ChildProcess[] = [];

  logged(child: ChildProcess, logFile: string): ChildProcess {
    writeFileSync(logFile, '');
    const keep = (chunk: Buffer) => appendFileSync(logFile, chunk);
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.#children.push(child);
    return child;
  }

  start(command: string, args: string[], logFile: string): ChildProcess {
    return this.logged(spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot }), logFile);
  }

  async stopAll(): Promise<void> {
    for (const child of this.#children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    for (const child of this.#children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Polls a log file until `pattern` shows up (after the first `fromOffset` bytes); fails naming what was awaited. */
export async function waitForLog(what: string, file: string, pattern: RegExp, timeoutMs: number, fromOffset = 0): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = existsSync(file) ? readFileSync(file).subarray(fromOffset).toString('utf8') : '';
    if (pattern.test(text)) return text;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${what}: ${pattern} not seen in ${file} within ${timeoutMs / 1000} s`);
}

/** Runs `work` once, when `count` callers have arrived; each caller waits for it (and sees its failure). */
export function whenAllArrive(count: number, work: () => Promise<void>): () => Promise<void> {
  let arrived = 0;
  let allHere!: () => void;
  const done = new Promise<void>((ok) => (allHere = ok)).then(work);
  return () => {
    if (++arrived === count) allHere();
    return done;
  };
}
