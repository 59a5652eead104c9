/**
 * Probe: the projector path of two trees of the repo, in alternating turns (the order flips each round, so a machine
 * that speeds up or slows down favours neither): the backbone bench's projector catch-up and rebuild (`--quick --only
 * projector,rebuild`, each run with its own nats-server) and `decodeCost.ts` (decode alone, CPU µs per event and GC).
 * Medians per tree, ratios new/base, and the reference work sampled between runs go to `--out`.
 * `npx tsx scripts/bench/probe/projectorPath.ts --base DIR [--base-label TEXT] [--rounds 3] [--out bench/results/projectorPath.json]`; DIR is
 * the tree to compare with (`git archive <commit> | tar -x -C DIR` plus a `node_modules` link).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { referenceMicrosPerItem, summariseReferenceWork } from '../referenceWork.ts';
import { machineInfo } from '../report.ts';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    'base-label': { type: 'string' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/results/projectorPath.json' },
  },
});
if (!values.base) throw new Error('--base DIR is required: the tree to compare with');
const here = dirname(fileURLToPath(import.meta.url));
const decodeCost = join(here, 'decodeCost.ts');
const trees = [
  { name: 'base', dir: resolve(values.base) },
  { name: 'new', dir: resolve(here, '../../..') },
];

interface Sample {
  catchUp: { rate: number; cpuMicrosPerItem: number };
  rebuild: { rate: number; cpuMicrosPerItem: number };
  decode: { cpuMicrosPerEvent: number; gcShare: number; gcMs: number };
}

const scratch = mkdtempSync(join(tmpdir(), 'bc-projector-path-'));
const node = (args: string[], cwd: string) => execFileSync(process.execPath, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

function run(dir: string, round: number): Sample {
  const out = join(scratch, `backbone-${round}-${Math.random().toString(36).slice(2)}.json`);
  node(['--import', 'tsx', 'scripts/bench/backbone.ts', '--quick', '--only', 'projector,rebuild', '--out', out], dir);
  const figures = (JSON.parse(readFileSync(out, 'utf8')) as { figures: { key: string; rate: number; cpuMicrosPerItem: number }[] }).figures;
  const pick = (key: string) => {
    const f = figures.find((x) => x.key === key);
    if (!f) throw new Error(`no ${key} figure from ${dir}`);
    return { rate: f.rate, cpuMicrosPerItem: f.cpuMicrosPerItem };
  };
  // decodeCost.ts of this tree measures the modules of the tree it is given.
  const decode = JSON.parse(node(['--expose-gc', '--import', 'tsx', decodeCost, '--tree', dir], dir).trim().split('\n').pop()!) as Sample['decode'];
  return { catchUp: pick('projector'), rebuild: pick('rebuild'), decode };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length / 2;
  return Number.isInteger(m) ? (s[m - 1]! + s[m]!) / 2 : s[Math.floor(m)]!;
};
const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
// The reference work runs between the runs (about 90 ms each time), never during one.
const reference = [referenceMicrosPerItem()];
const samples = new Map(trees.map((t) => [t.name, [] as Sample[]]));
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const tree of round % 2 === 0 ? trees : [...trees].reverse()) {
      const s = run(tree.dir, round);
      samples.get(tree.name)!.push(s);
      reference.push(referenceMicrosPerItem());
      console.log(
        `round ${round + 1} ${tree.name}: catch-up ${Math.round(s.catchUp.rate)} events/s (${s.catchUp.cpuMicrosPerItem.toFixed(1)} µs CPU), rebuild ${Math.round(s.rebuild.rate)} events/s (${s.rebuild.cpuMicrosPerItem.toFixed(1)} µs), decode ${s.decode.cpuMicrosPerEvent.toFixed(1)} µs/event, GC ${(100 * s.decode.gcShare).toFixed(0)}%`,
      );
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
function summarise(name: string) {
  const s = samples.get(name)!;
  return {
    catchUpRate: median(s.map((x) => x.catchUp.rate)),
    catchUpCpuMicrosPerEvent: median(s.map((x) => x.catchUp.cpuMicrosPerItem)),
    rebuildRate: median(s.map((x) => x.rebuild.rate)),
    rebuildCpuMicrosPerEvent: median(s.map((x) => x.rebuild.cpuMicrosPerItem)),
    decodeCpuMicrosPerEvent: median(s.map((x) => x.decode.cpuMicrosPerEvent)),
    decodeGcShare: median(s.map((x) => x.decode.gcShare)),
    samples: s,
  };
}
const summary = { base: { dir: trees[0]!.dir, label: values['base-label'] ?? null, ...summarise('base') }, new: { dir: trees[1]!.dir, ...summarise('new') } };
const KEYS = ['catchUpRate', 'catchUpCpuMicrosPerEvent', 'rebuildRate', 'rebuildCpuMicrosPerEvent', 'decodeCpuMicrosPerEvent', 'decodeGcShare'] as const;
/** new / base for each median. */
const ratios = Object.fromEntries(KEYS.map((k) => [k, summary.new[k] / summary.base[k]]));
const result = {
  date: new Date().toISOString(),
  rounds: Number(values.rounds),
  machine: machineInfo(
    execFileSync(process.env.BC_NATS_SERVER_BIN ?? 'nats-server', ['--version'], { encoding: 'utf8' }).trim(),
    loadAtStart,
    summariseReferenceWork(reference),
  ),
  ratios,
  ...summary,
};
writeFileSync(resolve(values.out), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(ratios));
console.log(`written to ${resolve(values.out)}`);
