import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { startImageServer } from '../../../test/support/imageServer.ts';
import { ReferenceSampler } from '../referenceWork.ts';
import { machineInfo } from '../report.ts';
import { stopwatch } from '../figure.ts';
import { delta, snapshot, sum } from './cpu.ts';
import { backlogLine, diagnoseStall } from './diagnose.ts';
import { FleetDriver } from './driver.ts';
import { MemoryMeter } from './memory.ts';
import { NatsTraffic } from './natsTraffic.ts';
import type { FleetResult } from './fleetReport.ts';
import type { FleetOptions } from './options.ts';
import { startSiteProcess, stopChild } from './processes.ts';
import { startFleetStack } from './stack.ts';
import { readStepStats } from './stepLatency.ts';

/**
 * One fleet run: N simulated machines (on one site, or split over `options.sites` sites, a process each), enroll →
 * inspect → ready → deploy → deployed → release → ready, against a real nats-server and the control-plane services
 * in `serve.ts` processes grouped as `options.layout` says.
 */
export async function runFleet(options: FleetOptions): Promise<FleetResult> {
  const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
  const reference = new ReferenceSampler(20_000);
  const total = stopwatch();
  const dir = mkdtempSync(join(tmpdir(), 'bc-fleet-'));
  const image = await startImageServer(options.imageBytes);
  const stack = await startFleetStack(dir, options);
  console.log(`control plane up (${stack.services.map((s) => s.name).join(', ')}) on ${stack.nats.url}; starting ${options.machines} simulated machines`);

  const traffic = new NatsTraffic(stack.observer);
  // Every site's node ids start with `fleet-` (`fleet-m001`, or `fleet-s2-m001` with several sites).
  const driver = new FleetDriver(stack.nc, 'fleet', options.machines, image);
  driver.start(stack.observer);
  const pids: Record<string, number> = Object.fromEntries(stack.services.map((s) => [s.name, s.pid]));
  if (stack.natsPid) pids['nats-server'] = stack.natsPid;
  const siteIds = options.sites === 1 ? ['fleet'] : Array.from({ length: options.sites }, (_, i) => `fleet-s${i + 1}`);
  const sites = siteIds.map((siteId, i) =>
    startSiteProcess(stack.env, {
      natsUrl: stack.nats.url,
      siteId,
      machines: Math.floor(options.machines / options.sites) + (i < options.machines % options.sites ? 1 : 0),
      dataDir: join(dir, siteId),
      diskBytes: options.diskBytes,
    }),
  );
  sites.forEach((site, i) => (pids[sites.length === 1 ? 'simulated site' : `simulated site ${i + 1}`] = site.pid));
  const cpu0 = snapshot(pids);
  const memory = new MemoryMeter({ ...pids, 'bench driver': process.pid });
  const setup = stopwatch();
  let setupSeconds = NaN;
  Promise.all(sites.map((site) => site.waitFor('SITE-READY', options.timeoutSeconds * 1000))).then(
    () => (setupSeconds = setup()),
    (err: unknown) => driver.errors.push(`site: ${String(err).slice(0, 2000)}`),
  );

  const progress = setInterval(() => {
    const [e, r, d, rel] = (['enrolled', 'ready', 'deployed', 'released'] as const).map((k) => driver.count(k));
    const line = `  ${setup().toFixed(0).padStart(4)} s  enrolled ${e}  ready ${r}  deployed ${d}  released ${rel}  failed ${driver.errors.length}`;
    void backlogLine(stack.nc).then(
      (backlog) => console.log(`${line}  ${backlog}`),
      () => console.log(line),
    );
  }, 5_000);
  const completed = await driver.finished(options.timeoutSeconds * 1000, options.stallSeconds * 1000);
  clearInterval(progress);
  if (!completed) {
    for (const line of await diagnoseStall(stack.nc, driver.machines, siteIds)) driver.errors.push(`stall: ${line}`);
    for (const child of [...stack.services, ...sites]) if (child.output().trim()) driver.errors.push(`output of ${child.name}: ${child.output().slice(-1500)}`);
  }
  const cpu = delta(cpu0, snapshot(pids));
  const memoryMiB = memory.stop();
  traffic.stop();
  const steps = await readStepStats(jetstream(stack.nc), driver.workSeenAt);

  const times = [...driver.machines.values()];
  const firstEnroll = Math.min(...times.map((t) => t.enrolled ?? Infinity));
  const lastRelease = Math.max(...times.map((t) => t.released ?? 0));
  const cycleSeconds = (lastRelease - firstEnroll) / 1000;
  const released = driver.count('released');
  const cpNames = stack.services.map((s) => s.name);
  const cpCpu = sum(cpu, cpNames);
  const msPerStep = (1000 * cpCpu) / Math.max(1, steps.stepsSucceeded);
  const stepsPerSecond = steps.stepsSucceeded / ((steps.lastEventMs - steps.firstEventMs) / 1000);
  const perMinute = (60 * released) / cycleSeconds;
  const fullScale = (5 * 60 * options.machines) / 1000;
  const natsVersion = (() => {
    try {
      return execFileSync('nats-server', ['--version']).toString().trim();
    } catch {
      return 'unknown';
    }
  })();

  await Promise.all(sites.map((site) => stopChild(site)));
  await stack.stop();
  await image[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });

  return {
    date: new Date().toISOString(),
    quick: options.quick,
    machine: machineInfo(natsVersion, loadAtStart, reference.stop()),
    settings: {
      sites: options.sites,
      layout: options.layout,
      BC_MAX_DEPLOYS_PER_SITE: options.cap,
      BC_MAX_WIPES_PER_SITE: options.cap,
      BC_EXECUTOR_CONCURRENCY: options.executorConcurrency,
      BC_MAX_WORKFLOWS_IN_FLIGHT: options.workflowsInFlight ?? options.executorConcurrency,
      BC_RESULT_RECHECK_MS: options.resultRecheckMs,
      bmcDelayMs: 0,
      diskMiB: options.diskBytes / 2 ** 20,
      imageKiB: options.imageBytes / 1024,
    },
    topology: `${options.layout} layout: ${cpNames.length} serve.ts process(es) (${cpNames.join('; ')}); ${sites.length === 1 ? 'simulated site (agent, BMCs, ramdisks) in one more process' : `${sites.length} simulated sites (agent, BMCs, ramdisks), a process each`}`,
    machines: {
      requested: options.machines,
      enrolled: driver.count('enrolled'),
      ready: driver.count('ready'),
      deployed: driver.count('deployed'),
      released,
      failed: driver.count('failed'),
    },
    completed,
    seconds: { setup: setupSeconds, cycle: cycleSeconds, total: total() },
    setupSecondsPer1000Machines: (1000 * setupSeconds) / options.machines,
    machinesPerMinute: perMinute,
    stepsPerSecond,
    steps,
    cpuSeconds: cpu,
    controlPlaneCpuSeconds: cpCpu,
    controlPlaneCpuMsPerStep: msPerStep,
    memoryMiB,
    controlPlanePeakMiB: Math.round(cpNames.reduce((s, n) => s + (memoryMiB[n]?.peakMiB ?? 0), 0) * 10) / 10,
    targets: [
      {
        label: `${options.machines} machines full cycle`,
        target: `< ${fullScale.toFixed(0)} s (5 min per 1,000)`,
        value: `${cycleSeconds.toFixed(1)} s`,
        pass: completed && released === options.machines && cycleSeconds < fullScale,
      },
      { label: 'control-plane CPU per step', target: '< 2 ms', value: `${msPerStep.toFixed(2)} ms`, pass: msPerStep < 2 },
    ],
    natsRequests: traffic.perStep(steps.stepsSucceeded),
    errors: driver.errors,
  };
}
