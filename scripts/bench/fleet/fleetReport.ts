import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ReferenceWork } from '../referenceWork.ts';
import { describeReferenceWork, type MachineInfo } from '../report.ts';
import type { ProcessMemory } from './memory.ts';
import type { Latency, StepStats } from './stepLatency.ts';

export interface FleetResult {
  date: string;
  quick: boolean;
  machine: MachineInfo;
  settings: Record<string, unknown>;
  /** How the control plane ran: its layout and `serve.ts` processes. */
  topology: string;
  machines: { requested: number; enrolled: number; ready: number; deployed: number; released: number; failed: number };
  completed: boolean;
  seconds: { setup: number; cycle: number; total: number };
  /** Setup (site, BMCs, every enroll answered) per 1,000 machines. */
  setupSecondsPer1000Machines: number;
  machinesPerMinute: number;
  stepsPerSecond: number;
  steps: StepStats;
  cpuSeconds: Record<string, number>;
  controlPlaneCpuSeconds: number;
  controlPlaneCpuMsPerStep: number;
  /** Resident memory per process (MiB): peak (`VmHWM`) and at the end of the cycle (`VmRSS`). */
  memoryMiB: Record<string, ProcessMemory>;
  /** Sum of the control-plane processes' peaks (an upper bound of their peak together). */
  controlPlanePeakMiB: number;
  targets: { label: string; target: string; value: string; pass: boolean }[];
  /** NATS requests by kind during the run (bench's own excluded only where noted), and per succeeded step. */
  natsRequests: { kind: string; count: number; perStep: number }[];
  errors: string[];
  /** The same fleet run right after under another layout (`--baseline-layout`), and this run's ratios to it. */
  baseline?: {
    layout: string;
    controlPlaneCpuMsPerStep: number;
    controlPlanePeakMiB: number;
    cpuSeconds: Record<string, number>;
    memoryMiB: Record<string, ProcessMemory>;
    schedulingMs: StepStats['scheduling'];
    cycleSeconds: number;
    released: number;
    cpuRatio: number;
    memoryRatio: number;
    /** How fast the machine ran during the baseline run. */
    referenceWork: ReferenceWork | undefined;
  };
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].map((l) => l.trimEnd()).join('\n');
}

const f1 = (n: number) => n.toFixed(1);

/** Prints the fleet bench tables and writes the result as JSON to `file`. */
export function printFleetReport(r: FleetResult, file: string): void {
  const m = r.machine;
  console.log(
    `\nBetter Compute fleet bench${r.quick ? ' (--quick)' : ''}: ${r.machines.requested} machines, ${m.cpus} x ${m.cpuModel}, node ${m.node}, nats-server ${m.natsServer}`,
  );
  console.log(`control plane: ${r.topology}`);
  console.log(
    `settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' ')}`,
  );
  console.log(`machine speed: ${m.referenceWork ? describeReferenceWork(m.referenceWork) : 'not measured'}\n`);
  console.log(
    table([
      ['figure', 'value'],
      ['machines full cycle (released / failed)', `${r.machines.released} / ${r.machines.failed}${r.completed ? '' : ' (TIMED OUT)'}`],
      ['setup: site + BMCs + enroll commands (s)', f1(r.seconds.setup)],
      ['setup per 1,000 machines (s)', f1(r.setupSecondsPer1000Machines)],
      ['cycle: first enroll -> last back to ready (s)', f1(r.seconds.cycle)],
      ['machines per minute (full cycle)', f1(r.machinesPerMinute)],
      [
        'workflows (inspect/deploy/release)',
        `${r.steps.workflows} (${['inspect', 'deploy', 'release'].map((o) => r.steps.workflowsByOperation[o] ?? 0).join('/')})`,
      ],
      ['steps succeeded / failed attempts', `${r.steps.stepsSucceeded} / ${r.steps.stepsFailed}`],
      ['workflow steps per second', f1(r.stepsPerSecond)],
      [
        'step scheduling latency p50 / p90 / p99 / max (ms)',
        `${r.steps.scheduling.p50} / ${r.steps.scheduling.p90} / ${r.steps.scheduling.p99} / ${r.steps.scheduling.max}`,
      ],
      ...schedulingSplitRows(r.steps),
      ['control-plane CPU (s)', f1(r.controlPlaneCpuSeconds)],
      ['control-plane CPU per step (ms)', r.controlPlaneCpuMsPerStep.toFixed(2)],
      ['control-plane memory, sum of peaks (MiB)', f1(r.controlPlanePeakMiB)],
    ]),
  );
  console.log('\nresident memory per process (MiB, from /proc/<pid>/status):');
  const memoryRows = Object.entries(r.memoryMiB).map(([k, v]) => [k, f1(v.peakMiB), f1(v.rssMiB)]);
  console.log(table([['process', 'peak (VmHWM)', 'at end (VmRSS)'], ...memoryRows]));
  console.log('\nCPU seconds during the cycle, per process (control plane = every serve.ts child):');
  const cpuRows = Object.entries(r.cpuSeconds).map(([k, v]) => [
    k,
    f1(v),
    `${((1000 * v) / Math.max(1, r.steps.stepsSucceeded)).toFixed(2)}`,
    f1((100 * v) / Math.max(1e-9, r.seconds.cycle)),
  ]);
  console.log(table([['process', 'cpu s', 'ms/step', '% of a core'], ...cpuRows]));
  console.log('\nstep run time StepStarted -> StepSucceeded (ms):');
  console.log(
    table([['step', 'count', 'p50', 'p99'], ...Object.entries(r.steps.runByStep).map(([k, v]) => [k, String(v.count), String(v.p50), String(v.p99)])]),
  );
  console.log('\nNATS requests by kind (counted from core subscriptions on the request subjects):');
  console.log(table([['kind', 'count', 'per step'], ...r.natsRequests.slice(0, 16).map((n) => [n.kind, String(n.count), n.perStep.toFixed(2)])]));
  if (r.baseline) {
    const b = r.baseline;
    console.log(`\nagainst the ${b.layout} layout, run right after (${b.released} released in a cycle of ${f1(b.cycleSeconds)} s):`);
    console.log(
      table([
        ['figure', String(r.settings.layout), b.layout, 'ratio'],
        ['control-plane CPU per step (ms)', r.controlPlaneCpuMsPerStep.toFixed(2), b.controlPlaneCpuMsPerStep.toFixed(2), b.cpuRatio.toFixed(2)],
        ['control-plane memory, sum of peaks (MiB)', f1(r.controlPlanePeakMiB), f1(b.controlPlanePeakMiB), b.memoryRatio.toFixed(2)],
        ['step scheduling p50 / p99 (ms)', `${r.steps.scheduling.p50} / ${r.steps.scheduling.p99}`, `${b.schedulingMs.p50} / ${b.schedulingMs.p99}`, ''],
        ...(m.referenceWork && b.referenceWork
          ? [
              [
                'reference work, median (µs per item)',
                f1(m.referenceWork.microsPerItem.median),
                f1(b.referenceWork.microsPerItem.median),
                (m.referenceWork.microsPerItem.median / b.referenceWork.microsPerItem.median).toFixed(2),
              ],
            ]
          : []),
      ]),
    );
  }
  console.log('\ntargets:');
  console.log(table([['target', 'limit', 'measured', 'result'], ...r.targets.map((t) => [t.label, t.target, t.value, t.pass ? 'PASS' : 'FAIL'])]));
  if (Math.max(m.loadAverage.start, m.loadAverage.end) > m.cpus) {
    console.log(
      `warning: load average ${m.loadAverage.start} -> ${m.loadAverage.end} on ${m.cpus} CPUs: the machine was shared; wall-clock figures are low and noisy (CPU ms/step less so)`,
    );
  }
  if (r.errors.length > 0) console.log(`\n${r.errors.length} errors, first: ${r.errors.slice(0, 20).join('\n  ')}`);
  console.log(`total ${f1(r.seconds.total)} s; written to ${file}`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
}

/** Where scheduling latency went: to the work message, from it to the start, and by operation (p50 / p99, ms). */
function schedulingSplitRows(steps: StepStats): string[][] {
  const split = steps.schedulingSplit;
  if (!split) return [];
  const pair = (l: Latency) => `${l.p50} / ${l.p99}`;
  return [
    ['  scheduled → work published p50 / p99 (ms)', pair(split.toWorkPublished)],
    ['  work published → started p50 / p99 (ms)', pair(split.workToStarted)],
    ...Object.entries(split.byOperation).map(([op, l]) => [`  ${op} steps p50 / p99 (ms)`, pair(l)]),
  ];
}
