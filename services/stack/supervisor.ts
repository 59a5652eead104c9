import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../platform/logger.ts';
import { RestartBackoff, type RestartBackoffOptions } from '../platform/restartBackoff.ts';
import { programArgs } from './program.ts';

const serveScript = new URL('./serve.ts', import.meta.url);

/** Starts one `serve` child for a group of services (replaced in tests by a fake child). */
export type SpawnServices = (group: readonly string[], env: NodeJS.ProcessEnv) => ChildProcess;

/**
 * Starts the program `script` (its source's URL) as the child for a group: compiled when this process runs compiled,
 * else through tsx (`programArgs`); `serve.ts` by default, another entry program when given.
 */
export const spawnProgram =
  (script: URL, withGroupArgs = true): SpawnServices =>
  (group, env) =>
    spawn(process.execPath, [...programArgs(script), ...(withGroupArgs ? group : [])], {
      env,
      // The IPC channel closes when this process dies, even by SIGKILL: children take it as their cue to stop.
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });

const spawnServe: SpawnServices = spawnProgram(serveScript);

/**
 * Keeps service processes running: each group of services is one `serve` child; a child that exits unexpectedly
 * is restarted after a delay that doubles while it keeps crashing and starts over once it ran stably
 * (`RestartBackoff`). `stop()` sends SIGTERM and waits.
 */
export class Supervisor {
  readonly #children = new Map<string, ChildProcess>();
  #stopping = false;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: Logger,
    private readonly options: { backoff?: RestartBackoffOptions; spawn?: SpawnServices } = {},
  ) {}

  run(group: string[], backoff = new RestartBackoff(this.options.backoff)): void {
    if (this.#stopping) return;
    const key = group.join('+');
    const child = (this.options.spawn ?? spawnServe)(group, this.env);
    const startedAt = Date.now();
    this.#children.set(key, child);
    child.once('exit', (code, signal) => {
      this.#children.delete(key);
      if (this.#stopping) return;
      const restartInMs = backoff.delayAfter(Date.now() - startedAt);
      this.log.warn({ services: key, code, signal, restartInMs }, 'service process exited; restarting');
      setTimeout(() => this.run(group, backoff), restartInMs);
    });
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      [...this.#children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 8_000).unref();
          }),
      ),
    );
  }
}
