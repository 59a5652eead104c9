import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * A plugin as the standalone service an operator runs: `better-compute plugin run <module>` in a child process with
 * the stack's environment. Resolves once the plugin registered and serves its work.
 */
export async function startPluginProcess(modulePath: string, env: Record<string, string>, readyTimeoutMs = 60_000) {
  const cli = resolve('scripts/better-compute.mjs');
  const child = spawn(process.execPath, [cli, 'plugin', 'run', modulePath], {
    env: { ...process.env, ...env, BC_LOG_LEVEL: env.BC_LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (d: Buffer) => (output = (output + d.toString()).slice(-100_000));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`plugin ${modulePath} did not start:\n${output}`)), readyTimeoutMs);
    const onData = () => {
      if (!/ running as /.test(output)) return;
      clearTimeout(timer);
      child.stderr.off('data', onData);
      ready();
    };
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`plugin ${modulePath} exited (${code}) during start-up:\n${output}`));
    });
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  };
  return { child, output: () => output, stop, [Symbol.asyncDispose]: () => stop() };
}
