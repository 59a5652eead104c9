import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Every `bench:*` script runs in CI at its smallest size, through `npm run` as a reader of bench/README would run it,
 * so a broken import, option or result file shows here rather than on the day someone measures. The figures of these
 * runs mean nothing (a busy CI machine, tiny sizes); only that the run completes and writes what it promises.
 * `bench:fleet` and `bench:site` have their own tests (test/bench/fleetBench.e2e.test.ts, siteBenchFigures).
 */
const scratch = mkdtempSync(join(tmpdir(), 'bc-bench-wiring-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function npmRun(script: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', script, '--', ...args], { env: { ...process.env, BC_LOG_LEVEL: 'silent' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
    child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

const runs: { script: string; args: (out: string) => string[]; keys: string[] }[] = [
  { script: 'bench', args: (out) => ['--quick', '--only', 'raw,append', '--out', out], keys: ['date', 'quick', 'machine', 'figures'] },
  {
    script: 'bench:vps',
    args: (out) => ['--quick', '--commands', '200', '--tenants', '4', '--out', out],
    keys: ['date', 'quick', 'machine', 'commands', 'acceptedPerSecond'],
  },
  {
    script: 'bench:autonomy',
    args: (out) => ['--nodes', '60', '--passes', '4', '--steady', '2', '--out', out],
    keys: ['machine', 'figures', 'baseline', 'invariants'],
  },
  // Emmett on PostgreSQL runs where 127.0.0.1:5432 answers (this kind of machine starts one) and is skipped elsewhere.
  { script: 'bench:peer', args: (out) => ['--quick', '--out', out], keys: ['date', 'quick', 'machine', 'postgres', 'ratios', 'figures'] },
  {
    script: 'bench:rollout',
    args: (out) => ['--quick', '--out', out],
    keys: ['date', 'quick', 'machine', 'hostsTouchedBeyondCanary', 'convergeSeconds', 'checks'],
  },
  { script: 'bench:build', args: (out) => ['--rounds', '1', '--out', out], keys: ['date', 'machine', 'buildSeconds', 'programs'] },
];

describe('every bench script runs and writes its results', () => {
  it.each(runs)('npm run $script', { timeout: 600_000 }, async ({ script, args, keys }) => {
    const out = join(scratch, `${script.replace(':', '-')}.json`);
    const { code, output } = await npmRun(script, args(out));
    expect(code, output).toBe(0);
    const written = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    expect(
      keys.filter((key) => !(key in written)),
      output,
    ).toEqual([]);
  });
});
