import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const serveScript = fileURLToPath(new URL('../../services/stack/serve.ts', import.meta.url));
/** `serve.ts` as `npm run build` compiles it. */
const compiledServeScript = fileURLToPath(new URL('../../dist/node/services/stack/serve.js', import.meta.url));
const keepChars = 200_000;

/** One `serve.ts <service...>` child process that a test can SIGKILL and start again, with its output kept. */
export interface ServeProcess {
  readonly services: readonly string[];
  readonly pid: number | undefined;
  /** Every start so far (1 + restarts). */
  readonly starts: number;
  /** The exit code of the last run once it exited by itself (null while it runs or after a signal). */
  readonly exitCode: number | null;
  output(): string;
  /** SIGKILL, as a crash would; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again (after a kill or an exit) and waits until its services started. */
  restart(): Promise<void>;
  /** SIGTERM (SIGKILL after 8 s); resolves once the process is gone. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Runs `node --import tsx services/stack/serve.ts <services...>` (`compiled`: `node dist/node/services/stack/serve.js`,
 * which `npm run build` makes) with `env` on top of the test's environment and
 * waits until the process logs that its services started (readiness only; tests assert on state, not logs).
 */
export async function startServeProcess(
  services: readonly string[],
  env: Record<string, string>,
  readyTimeoutMs = 60_000,
  options: { compiled?: boolean } = {},
): Promise<ServeProcess> {
  let child: ChildProcess | undefined;
  let output = '';
  let starts = 0;
  const append = (d: Buffer) => {
    output = (output + d.toString()).slice(-keepChars);
  };

  const launch = async () => {
    const program = options.compiled ? [compiledServeScript] : ['--import', 'tsx', serveScript];
    const proc = spawn(process.execPath, [...program, ...services], {
      env: { ...process.env, BC_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    starts++;
    let seen = '';
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${services.join('+')} did not start in ${readyTimeoutMs} ms:\n${output.slice(-4000)}`)), readyTimeoutMs);
      const onData = (d: Buffer) => {
        seen = (seen + d.toString()).slice(-10_000);
        if (seen.includes('"services started"')) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${services.join('+')} exited (${code ?? signal}) during start-up:\n${output.slice(-4000)}`));
      });
    });
    proc.stdout.on('data', append);
    proc.stderr.on('data', append);
    await ready;
  };

  const kill = async () => {
    const proc = child;
    if (!proc) return;
    const gone = exited(proc);
    proc.kill('SIGKILL');
    await gone;
  };

  const stop = async () => {
    const proc = child;
    if (!proc) return;
    const gone = exited(proc);
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 8_000);
    await gone;
    clearTimeout(timer);
  };

  await launch();
  return {
    services,
    get pid() {
      return child?.pid;
    },
    get starts() {
      return starts;
    },
    get exitCode() {
      return child?.exitCode ?? null;
    },
    output: () => output,
    kill,
    restart: async () => {
      await kill();
      await launch();
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
