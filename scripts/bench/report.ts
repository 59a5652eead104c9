import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { Figure, Target } from './figure.ts';
import type { ReferenceWork } from './referenceWork.ts';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  platform: string;
  node: string;
  natsServer: string;
  /** 1-minute load average when the bench started and when it ended: above the CPU count, figures are noisy. */
  loadAverage: { start: number; end: number };
  /** How fast the machine ran during the bench (`ReferenceSampler`), where the bench measured it. */
  referenceWork?: ReferenceWork;
}

export function machineInfo(natsServer: string, loadAtStart: number, referenceWork?: ReferenceWork): MachineInfo {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    platform: `${process.platform}-${process.arch}`,
    node: process.version,
    natsServer,
    loadAverage: { start: loadAtStart, end: Math.round(loadavg()[0]! * 100) / 100 },
    ...(referenceWork ? { referenceWork } : {}),
  };
}

interface Judged extends Figure {
  ratioToRaw: number | null;
  targetText: string;
  pass: boolean | null;
}

/** CPU microseconds our processes (bench, nats-server, API child) spent per item: the code's cost, less noisy. */
const cpuPerItem = (f: Figure) => (1e6 * ((f.cpu.bench ?? 0) + (f.cpu.nats ?? 0) + (f.cpu.api ?? 0))) / f.count;

const int = (n: number) => Math.round(n).toLocaleString('en-US');

function judge(f: Figure, raw: number | undefined): Judged {
  const ratioToRaw = raw ? f.rate / raw : null;
  const t: Target = f.target;
  switch (t.kind) {
    case 'none':
      return { ...f, ratioToRaw, targetText: 'baseline', pass: null };
    case 'minRatio':
      return { ...f, ratioToRaw, targetText: `>= ${t.value.toFixed(2)}x raw`, pass: ratioToRaw !== null && ratioToRaw >= t.value };
    case 'minRate':
      return { ...f, ratioToRaw, targetText: `>= ${int(t.value)}/s`, pass: f.rate >= t.value };
    case 'maxSeconds': {
      const limit = (t.seconds * f.count) / t.perCount;
      const scaled = f.count === t.perCount ? '' : ` (${t.seconds} s per ${int(t.perCount)})`;
      return { ...f, ratioToRaw, targetText: `< ${limit.toFixed(1)} s${scaled}`, pass: f.seconds < limit };
    }
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const right = new Set([1, 2, 3, 4, 8]);
  const line = (r: string[]) => r.map((cell, c) => (right.has(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].map((l) => l.trimEnd()).join('\n');
}

/** The machine's speed during a run, for a report: the reference work's CPU µs per item. */
export function describeReferenceWork({ microsPerItem: m, samples }: ReferenceWork): string {
  return `reference work ${m.median.toFixed(1)} µs per item (median of ${samples} samples, ${m.min.toFixed(1)}-${m.max.toFixed(1)}): compare CPU figures of two runs on one machine after dividing each by its median`;
}

/** Prints the results table and writes them, with the machine, to `file`. */
export function report(figures: Figure[], meta: { quick: boolean; machine: MachineInfo; file: string; totalSeconds: number }): void {
  const raw = figures.find((f) => f.key === 'rawPublish')?.rate;
  const judged = figures.map((f) => judge(f, raw));
  const rows = [
    ['measurement', 'count', 'seconds', 'rate', 'x raw', 'target', 'result', 'cpu bench/nats/api/other', 'cpu us/item'],
    ...judged.map((j) => [
      j.label,
      int(j.count),
      j.seconds.toFixed(2),
      `${int(j.rate)} ${j.unit}`,
      j.ratioToRaw === null ? '-' : `${j.ratioToRaw.toFixed(2)}x`,
      j.targetText,
      j.pass === null ? '' : j.pass ? 'PASS' : 'FAIL',
      ['bench', 'nats', 'api', 'other'].map((k) => (j.cpu[k] === undefined ? '-' : (j.cpu[k] / j.seconds).toFixed(2))).join('/'),
      cpuPerItem(j).toFixed(0),
    ]),
  ];
  const m = meta.machine;
  console.log(`\nBetter Compute backbone bench${meta.quick ? ' (--quick)' : ''}: ${m.cpus} x ${m.cpuModel}, node ${m.node}, nats-server ${m.natsServer}`);
  console.log(table(rows));
  if (m.referenceWork) console.log(describeReferenceWork(m.referenceWork));
  console.log('cpu: cores busy during each measurement (bench process / nats-server / API child / everything else on the machine);');
  console.log('cpu us/item: CPU time of bench + nats-server + API child per item, the figure least affected by a busy machine');
  const busiest = Math.max(0, ...figures.map((f) => (f.cpu.other ?? 0) / f.seconds));
  if (busiest > 0.25) {
    console.log(
      `warning: other processes kept up to ${busiest.toFixed(2)} of ${m.cpus} cores busy during a measurement (load average ${m.loadAverage.start} -> ${m.loadAverage.end}): figures are low and noisy`,
    );
  }
  console.log(`total ${meta.totalSeconds.toFixed(1)} s; written to ${meta.file}`);
  mkdirSync(dirname(meta.file), { recursive: true });
  const result = {
    date: new Date().toISOString(),
    quick: meta.quick,
    totalSeconds: meta.totalSeconds,
    machine: m,
    figures: judged.map(({ key, label, count, seconds, rate, unit, ratioToRaw, target, targetText, pass, cpu, detail }) => ({
      key,
      label,
      count,
      seconds,
      rate,
      unit,
      ratioToRaw,
      target,
      targetText,
      pass,
      cpuSeconds: cpu,
      cpuMicrosPerItem: cpuPerItem({ cpu, count } as Figure),
      detail,
    })),
  };
  writeFileSync(meta.file, `${JSON.stringify(result, null, 2)}\n`);
}
