import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { BcxOperationError } from '../sdk/bcx/index.ts';
import type { CrunRuntimeConfig } from './config.ts';

const exec = promisify(execFile);

/** What a failed `execFile` said on stderr ('' if nothing). */
export const stderrOf = (err: unknown): string => {
  const stderr = (err as { stderr?: unknown }).stderr;
  return typeof stderr === 'string' ? stderr.trim() : Buffer.isBuffer(stderr) ? stderr.toString('utf8').trim() : '';
};

/** The last few hundred characters of a container's console (what it said before it exited). */
export function tailOf(consoleLog: string): string {
  try {
    return readFileSync(consoleLog, 'utf8').trim().slice(-300);
  } catch {
    return '';
  }
}

/** A container's state as crun tells it (`crun state`); null when crun has no such container. */
export type ContainerState = { status: 'created' | 'running' | 'stopped' | 'paused'; pid: number } | null;

/** crun, run with the runtime's `--root` and cgroup manager. Its failures are `CRUN_FAILED` with crun's own words. */
export function crunCli(config: CrunRuntimeConfig) {
  const global = ['--root', config.crunRoot, `--cgroup-manager=${config.cgroupManager}`];
  const crun = async (args: string[]): Promise<string> => {
    try {
      return (await exec(config.crun, [...global, ...args], { timeout: 60_000, maxBuffer: 1024 * 1024 })).stdout;
    } catch (err) {
      const stderr = stderrOf(err);
      throw new BcxOperationError('CRUN_FAILED', `crun ${args[0]}: ${stderr || (err as Error).message}`.slice(0, 1_000));
    }
  };
  return {
    async state(id: string): Promise<ContainerState> {
      try {
        const state = JSON.parse(await crun(['state', id])) as { status: NonNullable<ContainerState>['status']; pid: number };
        return { status: state.status, pid: state.pid };
      } catch (err) {
        // crun names a container it does not have this way; anything else is a real failure.
        if (err instanceof BcxOperationError && /does not exist|No such file/i.test(err.message)) return null;
        throw err;
      }
    },
    /** All crun knows under this root, by id. */
    async ids(): Promise<string[]> {
      const listed = JSON.parse((await crun(['list', '--format', 'json'])) || '[]') as { id: string }[] | null;
      return (listed ?? []).map((c) => c.id);
    },
    /**
     * Creates and starts the container detached. Its stdout and stderr go to `consoleLog`, never to the plugin's own
     * stdout (the protocol's channel); it outlives this plugin, as a VM outlives its monitor.
     */
    async run(id: string, bundle: string, consoleLog: string): Promise<void> {
      const log = openSync(consoleLog, 'a', 0o600);
      try {
        // The container inherits both descriptors, so crun's own complaint lands in the same file: read back on failure.
        const child = spawn(config.crun, [...global, 'run', '--detach', '--bundle', bundle, id], { stdio: ['ignore', log, log] });
        const code = await new Promise<number | null>((resolve, reject) => {
          child.on('error', reject);
          child.on('exit', resolve);
        });
        if (code !== 0) throw new BcxOperationError('CRUN_FAILED', `crun run: exit ${code}: ${tailOf(consoleLog)}`.slice(0, 1_000));
      } finally {
        closeSync(log);
      }
    },
    kill: (id: string, signal: 'TERM' | 'KILL') => crun(['kill', id, signal]),
    delete: (id: string) => crun(['delete', '--force', id]),
  };
}
export type CrunCli = ReturnType<typeof crunCli>;
