import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const serveScript = fileURLToPath(new URL('../../../services/stack/serve.ts', import.meta.url));
const siteScript = fileURLToPath(new URL('./siteProcess.ts', import.meta.url));

/** The control-plane services the fleet needs, in `serve.ts` processes grouped as `--layout` says. */
export const CONTROL_PLANE = ['projectors', 'commands', 'join', 'workflow-orchestrator', 'workflow-executor', 'api'] as const;

export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  /** stdout + stderr, last 20 kB, for diagnostics. */
  output(): string;
  /** Resolves when a line containing `marker` appears on stdout. */
  waitFor(marker: string, timeoutMs: number): Promise<void>;
}

function launch(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: { marker: string; resolve: () => void }[] = [];
  const onData = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
    for (const w of [...waiters])
      if (out.includes(w.marker)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  proc.stdout.on('data', onData);
  proc.stderr.on('data', onData);
  return {
    name,
    proc,
    pid: proc.pid!,
    output: () => out,
    waitFor: (marker, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        if (out.includes(marker)) return resolve();
        const timer = setTimeout(() => reject(new Error(`${name}: no "${marker}" within ${timeoutMs} ms:\n${out}`)), timeoutMs);
        proc.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${out}`)));
        waiters.push({ marker, resolve: () => (clearTimeout(timer), resolve()) });
      }),
  };
}

/** One `serve.ts` process running `group`; the child is named after its services (`projectors+commands+…`). */
export function startServices(group: readonly string[], env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Child {
  return launch(group.join('+'), [...nodeArgs, '--import', 'tsx', serveScript, ...group], env);
}

export function startSiteProcess(
  env: NodeJS.ProcessEnv,
  args: { natsUrl: string; siteId: string; machines: number; dataDir: string; diskBytes: number },
): Child {
  // BENCH_SITE_NODE_ARGS (e.g. "--cpu-prof"): profile the simulated site the way --cp-node-args does the control plane.
  const nodeArgs = (process.env.BENCH_SITE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return launch(
    'site',
    [...nodeArgs, '--import', 'tsx', siteScript, args.natsUrl, args.siteId, String(args.machines), args.dataDir, String(args.diskBytes)],
    env,
  );
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export function stopChild(child: Child, graceMs = 10_000): Promise<void> {
  const { proc } = child;
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
    setTimeout(() => proc.kill('SIGKILL'), graceMs).unref();
  });
}
