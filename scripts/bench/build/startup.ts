import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { processCpuSeconds } from '../cpuMeter.ts';

/** One start of a program: wall time until it was ready, its CPU until then, and its resident memory then. */
export interface StartSample {
  readyMs: number;
  cpuMs: number;
  rssMiB: number;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round((Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024) * 10) / 10;
}

/**
 * Starts `node <args>` and measures it once `ready` appears in its output (a long-running service, then stopped with
 * SIGTERM), or once it exits by itself with `exitCode` (a one-shot program such as `--help`; memory is then its
 * peak, VmHWM).
 */
export function measureStart(args: string[], env: NodeJS.ProcessEnv, ready: string | null, exitCode = 0, timeoutMs = 120_000): Promise<StartSample> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let peakMiB = 0;
  const samplePeak = setInterval(() => {
    try {
      const hwm = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      peakMiB = Math.max(peakMiB, Math.round(hwm * 10) / 10);
    } catch {
      // gone
    }
  }, 5);
  return new Promise<StartSample>((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no "${ready}" within ${timeoutMs} ms:\n${output}`))), timeoutMs);
    const done = (sample: StartSample) => {
      clearTimeout(timer);
      clearInterval(samplePeak);
      resolve(sample);
    };
    const onData = (d: Buffer) => {
      output = (output + d.toString()).slice(-10_000);
      if (ready === null || !output.includes(ready)) return;
      const readyMs = performance.now() - started;
      const cpuMs = (processCpuSeconds(child.pid!) ?? 0) * 1000;
      const rss = rssMiB(child.pid!);
      child.once('exit', () => done({ readyMs, cpuMs, rssMiB: rss }));
      child.kill('SIGTERM');
      ready = null;
      output = '';
      child.stdout.off('data', onData);
      child.stderr.off('data', onData);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    if (ready === null) {
      // One-shot: CPU from the kernel's accounting of the reaped child is not at hand; wall time and peak memory are.
      child.once('exit', (code) => {
        if (code !== exitCode) return reject(new Error(`exited ${code}:\n${output}`));
        done({ readyMs: performance.now() - started, cpuMs: Number.NaN, rssMiB: peakMiB });
      });
    }
  });
}

/** The median of each figure over the samples. */
export function median(samples: StartSample[]): StartSample {
  const mid = (xs: number[]) => {
    const sorted = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
    return sorted.length === 0 ? Number.NaN : Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
  };
  return { readyMs: mid(samples.map((s) => s.readyMs)), cpuMs: mid(samples.map((s) => s.cpuMs)), rssMiB: mid(samples.map((s) => s.rssMiB)) };
}
