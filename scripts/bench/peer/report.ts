import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MachineInfo } from '../report.ts';
import { describeReferenceWork } from '../report.ts';
import type { RoundResult } from './workload.ts';

/** One workload on one contender: every round, and their summary (`medianRound`). */
export interface PeerFigure {
  workload: string;
  label: string;
  contender: string;
  server: string;
  median: RoundResult;
  rounds: RoundResult[];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
};

/**
 * The median of each timing over the rounds, figure by figure; CPU per operation over all rounds together (/proc
 * counts a server's CPU in 10 ms ticks, coarse for one short block, so the rounds' ticks are added up first).
 */
export function medianRound(rounds: RoundResult[]): RoundResult {
  const of = (pick: (r: RoundResult) => number | null) => {
    const values = rounds.map(pick).filter((v): v is number => v !== null);
    return values.length === rounds.length ? Math.round(median(values) * 1000) / 1000 : null;
  };
  const ops = rounds.reduce((sum, r) => sum + r.ops, 0);
  const perOp = (pick: (r: RoundResult) => number | null) =>
    rounds.some((r) => pick(r) === null) ? null : Math.round(rounds.reduce((sum, r) => sum + pick(r)! * r.ops, 0) / ops);
  return {
    ops: rounds[0]!.ops,
    seconds: of((r) => r.seconds)!,
    opsPerSecond: Math.round(of((r) => r.opsPerSecond)!),
    p50Ms: of((r) => r.p50Ms)!,
    p99Ms: of((r) => r.p99Ms)!,
    clientCpuUs: perOp((r) => r.clientCpuUs)!,
    serverCpuUs: perOp((r) => r.serverCpuUs),
    otherCores: of((r) => r.otherCores),
  };
}

const totalCpu = (r: RoundResult) => (r.serverCpuUs === null ? null : r.clientCpuUs + r.serverCpuUs);
const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : Math.round((100 * a) / b) / 100);

type Ratios = Record<string, { p50: number | null; p99: number | null; opsPerSecond: number | null; cpuPerOp: number | null }>;

/** Ours against each other contender, per workload, from the same run: above 1 means ours takes longer or more CPU. */
export function ratios(figures: PeerFigure[]): Record<string, Ratios> {
  const out: Record<string, Ratios> = {};
  for (const e of figures.filter((f) => f.contender !== 'ours')) {
    const o = figures.find((f) => f.contender === 'ours' && f.workload === e.workload);
    if (!o) continue;
    (out[e.contender] ??= {})[e.workload] = {
      p50: ratio(o.median.p50Ms, e.median.p50Ms),
      p99: ratio(o.median.p99Ms, e.median.p99Ms),
      opsPerSecond: ratio(o.median.opsPerSecond, e.median.opsPerSecond),
      cpuPerOp: ratio(totalCpu(o.median), totalCpu(e.median)),
    };
  }
  return out;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].map((l) => l.trimEnd()).join('\n');
}

/** Prints the table and writes the results, with the machine and its reference-work figure, to `file`. */
export function reportPeer(
  figures: PeerFigure[],
  meta: { quick: boolean; rounds: number; machine: MachineInfo; postgres: Record<string, unknown>; file: string; totalSeconds: number },
): void {
  const rows = [
    ['workload', 'store', 'p50 ms', 'p99 ms', 'ops/s', 'client us/op', 'server us/op', 'total us/op', 'other cores'],
    ...figures.map(({ label, contender, server, median: m }) => [
      label,
      `${contender} (${server})`,
      m.p50Ms.toFixed(3),
      m.p99Ms.toFixed(3),
      Math.round(m.opsPerSecond).toLocaleString('en-US'),
      String(m.clientCpuUs),
      m.serverCpuUs === null ? '-' : String(Math.round(m.serverCpuUs)),
      totalCpu(m) === null ? '-' : String(Math.round(totalCpu(m)!)),
      m.otherCores === null ? '-' : m.otherCores.toFixed(2),
    ]),
  ];
  const m = meta.machine;
  console.log(
    `\nPeer bench${meta.quick ? ' (--quick)' : ''}: ${m.cpus} x ${m.cpuModel}, node ${m.node}, nats-server ${m.natsServer}; median of ${meta.rounds} rounds`,
  );
  console.log(table(rows));
  const r = ratios(figures);
  for (const [peer, byWorkload] of Object.entries(r)) {
    for (const [workload, v] of Object.entries(byWorkload)) {
      console.log(`ours / ${peer}, ${workload}: p50 ${v.p50 ?? '-'}x, p99 ${v.p99 ?? '-'}x, ops/s ${v.opsPerSecond ?? '-'}x, CPU per op ${v.cpuPerOp ?? '-'}x`);
    }
  }
  if (m.referenceWork) console.log(describeReferenceWork(m.referenceWork));
  console.log(`total ${meta.totalSeconds.toFixed(1)} s; written to ${meta.file}`);
  mkdirSync(dirname(meta.file), { recursive: true });
  const result = {
    date: new Date().toISOString(),
    quick: meta.quick,
    rounds: meta.rounds,
    totalSeconds: Math.round(meta.totalSeconds * 10) / 10,
    machine: m,
    postgres: meta.postgres,
    ratios: r,
    figures,
  };
  writeFileSync(meta.file, `${JSON.stringify(result, null, 2)}\n`);
}
