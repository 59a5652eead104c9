import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { readAdminToken } from '../../services/auth/bootstrap.ts';

const startScript = fileURLToPath(new URL('../../services/stack/start.ts', import.meta.url));

/** `npm start` as a child process, with its output kept for diagnostics; SIGTERM on dispose. */
export async function startStackProcess(env: Record<string, string>, httpPort: number) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', startScript], {
    env: { ...process.env, BC_LOG_LEVEL: 'warn', ...env, BC_HTTP_PORT: String(httpPort) },
    // The IPC channel ties the stack to this test process: `start.ts` stops when it closes.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const api = `http://127.0.0.1:${httpPort}`;
  const stop = async () => {
    if (child.exitCode !== null) return child.exitCode;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    return exited;
  };
  for (let i = 0; ; i++) {
    const ready = await fetch(`${api}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    // Five minutes: on a loaded machine the whole stack can take minutes to start.
    if (child.exitCode !== null || i > 3_000) {
      await stop();
      throw new Error(`stack did not become ready:\n${output}`);
    }
    await sleep(100);
  }
  // `npm start` bootstraps its admin token into the data dir (the API is ready only after that).
  const token = env.BC_DATA_DIR ? (readAdminToken(env.BC_DATA_DIR) ?? '') : '';
  return {
    api,
    token,
    child,
    output: () => output,
    serveGroups: () => serveGroupsOf(child.pid!),
    stop,
    [Symbol.asyncDispose]: async () => void (await stop()),
  };
}

/** The services each `serve` child of the stack process `pid` runs, one array per process (from their command lines). */
function serveGroupsOf(pid: number): string[][] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean));
  return children.flatMap((child) => {
    const argv = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const serve = argv.findIndex((arg) => /services\/stack\/serve\.(ts|js)$/.test(arg));
    return serve < 0 ? [] : [argv.slice(serve + 1)];
  });
}
