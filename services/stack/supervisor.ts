import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../platform/logger.ts';

const serveScript = fileURLToPath(new URL('./serve.ts', import.meta.url));

/**
 * Keeps service processes running: each group of services is one `serve` child; a child that exits unexpectedly
 * is restarted with backoff. `stop()` sends SIGTERM and waits.
 */
export class Supervisor {
  readonly #children = new Map<string, ChildProcess>();
  #stopping = false;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: Logger,
  ) {}

  run(group: string[], restartDelayMs = 1_000): void {
    if (this.#stopping) return;
    const key = group.join('+');
    const child = spawn(process.execPath, ['--import', 'tsx', serveScript, ...group], {
      env: this.env,
      // The IPC channel closes when this process dies, even by SIGKILL: children take it as their cue to stop.
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#children.set(key, child);
    child.once('exit', (code, signal) => {
      this.#children.delete(key);
      if (this.#stopping) return;
      this.log.warn({ services: key, code, signal, restartInMs: restartDelayMs }, 'service process exited; restarting');
      setTimeout(() => this.run(group, Math.min(restartDelayMs * 2, 15_000)), restartDelayMs);
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
