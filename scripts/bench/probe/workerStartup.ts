/**
 * Probe: what `better-compute/sdk/worker` costs a plugin's process before `runPlugin` can run: the files of ours and
 * of node_modules it loads (counted by `moduleLoadRecorder.mjs`, a load hook that sees every module Node loads), and
 * the time from the process's start to the entry evaluated (wall and CPU, median of alternating runs; connecting to
 * NATS and registering come after and do not depend on the module graph).
 * `npx tsx scripts/bench/probe/workerStartup.ts [--runs 7] [--base DIR] [--out FILE]`; DIR is another tree of the
 * repo to compare with (e.g. `git archive <commit> | tar -x -C DIR` plus a `node_modules` link), run in turns with this one.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, base: { type: 'string' }, out: { type: 'string' } } });
const here = dirname(fileURLToPath(import.meta.url));
const recorder = join(here, 'moduleLoadRecorder.mjs');
const trees = [...(values.base ? [{ name: 'base', dir: resolve(values.base) }] : []), { name: 'new', dir: resolve(here, '../../..') }];
const load = "const t = performance.now(); await import('better-compute/sdk/worker'); const c = process.cpuUsage();";
const report = 'console.log(JSON.stringify({ ms: performance.now(), cpuMs: (c.user + c.system) / 1000, importMs: performance.now() - t }));';

function run(dir: string, env: NodeJS.ProcessEnv = {}): { ms: number; cpuMs: number; importMs: number } {
  const out = execFileSync(process.execPath, ['--import', 'tsx', ...(env.BC_MODULE_LOG ? ['--import', recorder] : []), '-e', `${load} ${report}`], {
    cwd: dir,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').pop()!) as { ms: number; cpuMs: number; importMs: number };
}

function files(dir: string): { ours: number; nodeModules: number } {
  const scratch = mkdtempSync(join(tmpdir(), 'bc-worker-modules-'));
  try {
    run(dir, { BC_MODULE_LOG: join(scratch, 'modules.txt') });
    const urls = [...new Set(readFileSync(join(scratch, 'modules.txt'), 'utf8').split('\n'))].filter((u) => u.startsWith('file:'));
    const nodeModules = urls.filter((u) => u.includes('/node_modules/')).length;
    return { ours: urls.length - nodeModules, nodeModules };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const startLoad = loadavg()[0]!;
const counted = trees.map((t) => ({ ...t, files: files(t.dir), samples: [] as ReturnType<typeof run>[] }));
// Alternating turns (the order flips each round), so a machine that speeds up or slows down favours neither tree.
for (let round = 0; round < Number(values.runs); round++) {
  for (const tree of round % 2 === 0 ? counted : [...counted].reverse()) tree.samples.push(run(tree.dir));
}
const results = counted.map((t) => ({
  tree: t.name,
  dir: t.dir,
  filesOurs: t.files.ours,
  filesNodeModules: t.files.nodeModules,
  medianReadyMs: Math.round(median(t.samples.map((s) => s.ms))),
  medianCpuMs: Math.round(median(t.samples.map((s) => s.cpuMs))),
  medianImportMs: Math.round(median(t.samples.map((s) => s.importMs))),
  readyMs: t.samples.map((s) => Math.round(s.ms)),
}));
for (const r of results) {
  console.log(
    `${r.tree.padEnd(5)} files ${r.filesOurs} ours + ${r.filesNodeModules} node_modules; to entry evaluated: median ${r.medianReadyMs} ms wall, ${r.medianCpuMs} ms CPU (import alone ${r.medianImportMs} ms); runs ${r.readyMs.join(', ')}`,
  );
}
const record = { date: new Date().toISOString(), runs: Number(values.runs), loadAverage: { start: startLoad, end: loadavg()[0]! }, results };
if (values.out) writeFileSync(values.out, `${JSON.stringify(record, null, 2)}\n`);
