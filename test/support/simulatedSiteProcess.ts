import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const mainScript = fileURLToPath(new URL('./simulatedSiteMain.ts', import.meta.url));

/** Accepted `#ComputerSystem.Reset` ResetTypes per node, in the order the BMCs received them. */
export type ResetLog = Record<string, string[]>;
/** One machine as the site process reports it (`machines()`). */
export interface MachineReport {
  readonly insertedMedia: string | null;
  readonly installs: readonly { readonly isoSha256: string; readonly mediaUrl: string; readonly lateCommands: readonly string[] }[];
  readonly runState: string;
  /** Boot targets the BMC booted, in order. */
  readonly boots: readonly string[];
  readonly ramdiskBooted: boolean;
}

/**
 * The simulated site (BMC simulators, site agent, ramdisks) as its own process, like `daemon/simulator/serveSimulatedSite.ts` that `npm start` launches,
 * whose BMC request logs the test can still read over IPC.
 */
export async function startSimulatedSiteProcess(env: Record<string, string>, readyTimeoutMs = 60_000) {
  let output = '';
  const child: ChildProcess = fork(mainScript, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-100_000)));
  child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-100_000)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`simulated site did not start:\n${output}`)), readyTimeoutMs);
    child.on('message', (m: { type?: string }) => {
      if (m.type !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`simulated site exited (${code}) during start-up:\n${output}`));
    });
  });

  let nextId = 0;
  const query = <T>(type: 'resets' | 'machines'): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      const timer = setTimeout(() => reject(new Error(`simulated site did not answer the ${type} query`)), 5_000);
      const onMessage = (m: { type?: string; id?: number; answer?: T }) => {
        if (m.type !== type || m.id !== id) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(m.answer as T);
      };
      child.on('message', onMessage);
      child.send({ type, id });
    });
  const resets = () => query<ResetLog>('resets');
  const machines = () => query<Record<string, MachineReport>>('machines');

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  };
  return { child, output: () => output, resets, machines, stop, [Symbol.asyncDispose]: stop };
}
