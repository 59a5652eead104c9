import { spawn } from 'node:child_process';
import type { ModuleProbeResult } from '../../../schemas/agent/hostModules.ts';
import type { ModuleProbe } from '../../../schemas/fleet/moduleManifest.ts';

export interface ProbeEnvironment {
  /** Folders put first on PATH: every active module's `current/bin`. */
  readonly binFolders: readonly string[];
  /** Where the probe runs: the version's folder, so a manifest can name its own files relatively. */
  readonly cwd: string;
  readonly timeoutMs: number;
  /** The shell (default `/bin/sh`): `-lc` for a login probe, `-c` for a non-login one. */
  readonly shell?: string;
}

const OUTPUT_TAIL = 500;

/**
 * Runs one probe in its own process group, killed whole at the timeout (exit code null). PATH is set after the shell
 * started, so a login shell's profile (which may set PATH from scratch) does not drop the modules' folders.
 */
export function runProbe(probe: ModuleProbe, env: ProbeEnvironment): Promise<ModuleProbeResult> {
  const prefix = env.binFolders.join(':');
  const script = `PATH="$BC_MODULE_PATH\${PATH:+:$PATH}"; export PATH; ${probe.command}`;
  const args = probe.shell === 'login' ? ['-lc', script] : ['-c', script];
  return new Promise((resolve) => {
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
    };
    const child = spawn(env.shell ?? '/bin/sh', args, {
      cwd: env.cwd,
      env: { ...process.env, BC_MODULE_PATH: prefix },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, env.timeoutMs);
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ name: probe.name, ok: false, exitCode: null, output: `${err.message}`.slice(-OUTPUT_TAIL) });
    });
    // The shell's own exit decides; a background child it left holding the pipes is killed with the group at the timeout.
    let exited: number | null | undefined;
    child.on('exit', (code) => {
      if (!timedOut) exited = code;
    });
    child.on('close', () => {
      clearTimeout(timer);
      const exitCode = exited ?? null;
      const note = exited === undefined ? `${output}\n[timed out after ${env.timeoutMs} ms]` : output;
      resolve({ name: probe.name, ok: exitCode === 0, exitCode, output: note.slice(-OUTPUT_TAIL) });
    });
  });
}

/** Runs a version's probes one after the other. */
export async function runProbes(probes: readonly ModuleProbe[], env: ProbeEnvironment): Promise<ModuleProbeResult[]> {
  const results: ModuleProbeResult[] = [];
  for (const probe of probes) results.push(await runProbe(probe, env));
  return results;
}
