import type { RolloutRun } from '../../../services/fleet/rollout/rollout.ts';
import type { MachineInfo } from '../report.ts';
import type { FleetWatch } from './fleetWatch.ts';
import type { RolloutBenchOptions } from './options.ts';

const pct = (xs: readonly number[], p: number) =>
  xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length - 1) * p))]!;
const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;
const since = (from: number, to: number | undefined) => (to === undefined ? null : to - from);
const latency = (xs: readonly number[]) => ({ p50: pct(xs, 0.5), p99: pct(xs, 0.99), max: pct(xs, 1), samples: xs.length });

export interface RolloutRunInput {
  options: RolloutBenchOptions;
  machine: MachineInfo;
  setupSeconds: number;
  hosts: readonly string[];
  watch: FleetWatch;
  good: { cpu: Record<string, number>; seconds: number; heartbeats: number; rollout: RolloutRun };
  idle: { cpu: Record<string, number>; heartbeats: number };
  bad: { rollout: RolloutRun; canary: string; canaryApplyAt: number; haltedAt: number; touched: readonly string[]; misplaced: readonly string[] };
  sensor: { hosts: number; msMedian: number; msMax: number; flagged: string[] };
  fleetCpuMsPerStep: number | undefined;
  versions: { from: string; to: string; bad: string };
}

/** The figures and checks of one run, as bench/results/rollout.json holds them. */
export function rolloutReport(input: RolloutRunInput) {
  const { options, hosts, watch, good, idle, bad, versions } = input;
  const sent = watch.applySent.get(versions.to) ?? new Map<string, number>();
  const applied: number[] = [];
  const observed: number[] = [];
  for (const [host, at] of sent) {
    const result = watch.resultOf(versions.to, host);
    if (result !== undefined && result >= at) applied.push(result - at);
    const healthy = watch.healthyAt.get(`${versions.to} ${host}`);
    if (healthy !== undefined && healthy >= at) observed.push(healthy - at);
  }
  const outcomes = Object.values(good.rollout.progress.outcomes);
  const controlPlaneCpuMs = (good.cpu.bench ?? 0) * 1000;
  const cpuMsPerUpgrade = controlPlaneCpuMs / hosts.length;
  const cpuMicrosPerHeartbeat = idle.heartbeats > 0 ? ((idle.cpu.bench ?? 0) * 1e6) / idle.heartbeats : null;
  const heartbeatCpuMs = cpuMicrosPerHeartbeat === null ? 0 : (cpuMicrosPerHeartbeat * good.heartbeats) / 1000;
  const appliedTwice = [...watch.applies].filter(([key, n]) => key.startsWith(`${versions.to} `) && n > 1).length;
  const breakerTripMs = bad.haltedAt - bad.canaryApplyAt;
  const checks = [
    {
      label: `every host converged on ${versions.to} (rollout completed, all outcomes healthy)`,
      pass: good.rollout.status === 'completed' && outcomes.length === hosts.length && outcomes.every((o) => o === 'healthy'),
    },
    { label: `each host was sent one module.apply for ${versions.to}`, pass: sent.size === hosts.length && appliedTwice === 0 },
    {
      label: `${versions.bad} (failing probe) halted on the canary`,
      pass: bad.rollout.status === 'halted' && bad.rollout.progress.halted?.reason === 'canary_failed',
    },
    { label: `hosts touched beyond the canary by ${versions.bad}: 0`, pass: bad.touched.length === 0 },
    { label: `file trees: the canary runs ${versions.bad}, every other host ${versions.to}`, pass: bad.misplaced.length === 0 },
    { label: 'host-modules sensor flags exactly the canary', pass: input.sensor.flagged.length === 1 && input.sensor.flagged[0] === bad.canary },
  ];
  return {
    benchmark: 'rollout',
    date: new Date().toISOString(),
    quick: options.quick,
    machine: input.machine,
    setup: {
      hosts: hosts.length,
      heartbeatIntervalMs: options.heartbeatMs,
      hostsPerNatsConnection: options.perConnection,
      canarySize: 1,
      wavePercent: options.wavePercent,
      waves: good.rollout.progress.startedWaves,
      controllerTickMs: 500,
      setupSeconds: round(input.setupSeconds, 1),
    },
    hostsTouchedBeyondCanary: bad.touched.length,
    convergeSeconds: round(good.seconds, 1),
    applyLatencyMs: { ...latency(applied), scope: 'module.apply published → the host’s result: bundle fetched, verified, unpacked, probe run' },
    applyToObservedMs: {
      ...latency(observed),
      scope: 'module.apply published → the controller folds a verified heartbeat showing the version active, probes passing',
    },
    heartbeatIngest: {
      duringRolloutPerSecond: round(good.heartbeats / good.seconds, 1),
      cpuMicrosPerHeartbeat: cpuMicrosPerHeartbeat === null ? null : round(cpuMicrosPerHeartbeat, 1),
      perControlPlaneCpuSecond: cpuMicrosPerHeartbeat ? Math.round(1e6 / cpuMicrosPerHeartbeat) : null,
      scope: 'verified (Ed25519) and folded by the controller; CPU from a window with heartbeats only',
    },
    sensorPass: input.sensor,
    breakerTripMs,
    controlPlane: {
      cpuSeconds: good.cpu,
      cpuMsPerHostUpgrade: round(cpuMsPerUpgrade, 3),
      cpuMsPerHostUpgradeLessHeartbeats: round((controlPlaneCpuMs - heartbeatCpuMs) / hosts.length, 3),
      scope: 'this process: API (bundles), command bus, registration, rollout controller and its heartbeat verification; nats-server and hosts apart',
    },
    ratiosToFleetBench:
      input.fleetCpuMsPerStep === undefined
        ? null
        : {
            fleetControlPlaneCpuMsPerStep: input.fleetCpuMsPerStep,
            cpuPerHostUpgradeOverCpuPerStep: round(cpuMsPerUpgrade / input.fleetCpuMsPerStep),
            note: 'a host upgrade is one command to one host and one outcome, as a workflow step is one command and one result',
          },
    breaker: {
      canaryResultMs: since(bad.canaryApplyAt, watch.resultOf(versions.bad, bad.canary)),
      canaryReportedMs: since(bad.canaryApplyAt, watch.reportedAt.get(`${versions.bad} ${bad.canary}`)),
      canary: bad.canary,
      halted: bad.rollout.progress.halted ?? null,
      touchedBeyondCanary: bad.touched,
    },
    checks,
  };
}
