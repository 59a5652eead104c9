/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by function and by package, and inclusive time
 * per repository file, to find where a measured figure's CPU goes. `npx tsx scripts/bench/probe/topFunctions.ts FILE.cpuprofile [rows] [skipSeconds]`;
 * `skipSeconds` leaves out the profile's first seconds (a service's start-up, which the benches do not count).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, rowsArg, skipArg] = process.argv.slice(2);
if (!file) throw new Error('usage: topFunctions.ts FILE.cpuprofile [rows] [skipSeconds]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
const skipSeconds = Number(skipArg ?? 0);
if (!(skipSeconds >= 0)) throw new Error(`skipSeconds must be a number of seconds, not "${skipArg}"`);
const skipUs = skipSeconds * 1e6;
let elapsedUs = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  elapsedUs += delta;
  if (elapsedUs > skipUs) self.set(id, (self.get(id) ?? 0) + delta);
});
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** The checkout the profile was taken in (run this from it): its files are ours, the rest libraries or the runtime. */
const root = `${process.cwd()}/`;
const ours = (url: string) => url.split(root)[1];
const where = (url: string) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (ours(url)) return ours(url)!.split('/').slice(0, 2).join('/');
  return url ? (url.startsWith('node:') ? 'node-internal' : url) : '(native/vm)';
};
const fns = new Map<string, number>();
const pkgs = new Map<string, number>();
const files = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const f = n.callFrame;
  const key = `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}` : ''}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  const p = ['(idle)', '(garbage collector)', '(program)'].includes(f.functionName) ? f.functionName : where(f.url);
  pkgs.set(p, (pkgs.get(p) ?? 0) + us);
  const fileKey = f.url ? f.url.replace(/^.*node_modules\//, '').replace(`file://${root}`, '') : f.functionName;
  files.set(fileKey, (files.get(fileKey) ?? 0) + us);
}
const print = (title: string, m: Map<string, number>, rows: number) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  }
};
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
print('self time by package/area', pkgs, 15);
print('self time by file', files, 20);
print('self time by function', fns, Number(rowsArg ?? 30));

// Inclusive time per file of ours: a sample counts once for every repository file on its stack, so a service's entry
// file shows what its calls cost in libraries and the runtime too.
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
for (const [id, us] of self) {
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const url = byId.get(at)!.callFrame.url;
    const file = ours(url);
    if (file && !file.startsWith('node_modules/')) seen.add(file);
  }
  for (const f of seen) inclusive.set(f, (inclusive.get(f) ?? 0) + us);
}
print('inclusive time by repository file', inclusive, Number(rowsArg ?? 30));
