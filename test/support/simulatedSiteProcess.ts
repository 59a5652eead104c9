import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const mainScript = fileURLToPath(new URL('./simulatedSiteMain.ts', import.meta.url));

/** Accepted `#ComputerSystem.Reset` ResetTypes per node, in the order the BMCs received them. */
export type ResetLog = Record<string, string[]>;

/**
 * The simulated site (BMC simulators, site agent, ramdisks) as its own process, like `serve.ts simulated-site`,
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
  const resets = (): Promise<ResetLog> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      const timer = setTimeout(() => reject(new Error('simulated site did not answer the reset query')), 5_000);
      const onMessage = (m: { type?: string; id?: number; resets?: ResetLog }) => {
        if (m.type !== 'resets' || m.id !== id) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(m.resets ?? {});
      };
      child.on('message', onMessage);
      child.send({ type: 'resets', id });
    });

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  };
  return { child, output: () => output, resets, stop, [Symbol.asyncDispose]: stop };
}
