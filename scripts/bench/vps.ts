import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadConfig } from '../../services/platform/config.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { cpuMeter, natsServerPid } from './cpuMeter.ts';
import { ReferenceSampler } from './referenceWork.ts';
import { describeReferenceWork, machineInfo } from './report.ts';
import { benchQuota, createInstances, createTenants, RunningWatch } from './vps/driver.ts';
import { parseVpsBenchOptions } from './vps/options.ts';
import { benchMetalPools } from './vps/metalPools.ts';
import { startVpsBenchStack } from './vps/stack.ts';
import { checkQuotas, duplicateServers } from './vps/verify.ts';

/**
 * `npm run bench:vps -- [--quick]`: N `vps.createInstance` commands from T tenants (each allowed 80% of what it asks
 * for), sent over NATS by concurrent clients to two `commands` processes, so reservations on one tenant race across
 * processes; the `vps-reconciler` takes every accepted instance to `running` on the Acme emulator. Prints accepted
 * commands/s, conflicts retried, QUOTA_EXCEEDED refusals and instances/s to running, and checks that no tenant holds
 * more than its quota (read model and tenant aggregates) and that no client token made two servers. Then metal-pool
 * creates, warm against cold in the same run (`vps/metalPools.ts`): accepted/s and create → running p50/p99 of each.
 */
const options = parseVpsBenchOptions(process.argv.slice(2));
// Read first, so a wrong path fails before the run rather than after it.
const baseline =
  options.baseline === undefined ? undefined : baselineOf(JSON.parse(readFileSync(options.baseline, 'utf8')) as Parameters<typeof baselineOf>[0]);
const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
// Sampled only before and after: the bench's clients share its process, and the command phase lasts seconds.
const reference = new ReferenceSampler();
const dir = mkdtempSync(join(tmpdir(), 'bc-vps-bench-'));
const stack = await startVpsBenchStack(dir, options);
const perTenant = options.commands / options.tenants;
const quota = benchQuota(perTenant, options.quotaShare);
await createTenants(stack.nc, options.tenants, quota);
console.log(
  `control plane up (${stack.services.map((s) => s.name).join(', ')}); ${options.commands} creates from ${options.tenants} tenants, quota ${quota.instances} of ${perTenant} each`,
);

const watch = new RunningWatch(stack.nc);
// CPU per process over the command phase: what the accepted rate costs, and who else took the cores meanwhile.
const processes = { nats: natsServerPid(join(dir, 'nats')), ...Object.fromEntries(stack.services.map((s, i) => [`${s.name}#${i}`, s.pid])) };
const commandPhaseCpu = cpuMeter(processes);
const load = await createInstances(stack.nc, options.commands, options.tenants, options.concurrency);
const commandCpuSeconds = commandPhaseCpu();
console.log(`  commands done in ${load.seconds.toFixed(1)} s; waiting for ${load.accepted} instances to run`);
const progress = setInterval(() => console.log(`  running ${watch.runningAt.size}/${load.accepted}`), 5_000);
const allRunning = await watch.until(load.accepted, options.stallSeconds * 1000);
clearInterval(progress);
watch.stop();
const lastRunning = Math.max(0, ...watch.runningAt.values());
const reconcileSeconds = (lastRunning - load.firstAcceptedAt) / 1000;

const store = await openEventStore(stack.nc, loadConfig({}, { dataDir: stack.dataDir }));
const quotas = await checkQuotas(store, stack.dataDir, options.tenants);
const records = stack.cloud.records();
const duplicates = duplicateServers(records);
const providerRequests = Object.fromEntries([...stack.cloud.requestCounts].sort(([a], [b]) => a.localeCompare(b)));
const providerRequestsPerInstance = [...stack.cloud.requestCounts.values()].reduce((a, b) => a + b, 0) / Math.max(1, load.accepted);
const errors = [...load.otherErrors];
if (!allRunning) for (const s of stack.services) if (s.output().trim()) errors.push(`output of ${s.name}: ${s.output().slice(-1500)}`);
await stack.stop();
rmSync(dir, { recursive: true, force: true });
const metalLoad = Math.round(loadavg()[0]! * 100) / 100;
const metal =
  options.metalRounds === 0
    ? undefined
    : await benchMetalPools({
        rounds: options.metalRounds,
        prepareMs: options.prepareMs,
        warmSlots: 2,
        burst: options.metalBurst,
        stallMs: options.stallSeconds * 1_000,
      }).catch((err: unknown) => void errors.push(`metal pools: ${(err as Error).message}`));

const natsVersion = (() => {
  try {
    return execFileSync('nats-server', ['--version']).toString().trim();
  } catch {
    return 'unknown';
  }
})();
const expectedAccepted = options.tenants * quota.instances;
const checks = [
  { label: 'accepted = tenants × quota', pass: load.accepted === expectedAccepted, value: `${load.accepted} / ${expectedAccepted}` },
  {
    label: 'no tenant over quota (read model)',
    pass: quotas.overReadModel.length === 0 && quotas.heldReadModel === load.accepted,
    value: `${quotas.overReadModel.length} over, ${quotas.heldReadModel} held`,
  },
  {
    label: 'no tenant over quota (aggregates)',
    pass: quotas.overAggregates.length === 0 && quotas.heldAggregates === load.accepted,
    value: `${quotas.overAggregates.length} over, ${quotas.heldAggregates} held`,
  },
  {
    label: 'one server per instance at the provider',
    pass: duplicates === 0 && records.length === load.accepted,
    value: `${records.length} servers, ${duplicates} tokens with more than one`,
  },
  { label: 'every accepted instance running', pass: allRunning, value: `${watch.runningAt.size} / ${load.accepted}` },
  ...(options.metalRounds === 0
    ? []
    : [
        {
          label: 'every metal-pool create running, each warm one on a warm slot, no cold one',
          pass:
            metal !== undefined &&
            metal.warm.running + metal.cold.running === 2 * options.metalRounds &&
            metal.warm.tookWarmSlot === options.metalRounds &&
            metal.cold.tookWarmSlot === 0,
          value: metal ? `${metal.warm.running + metal.cold.running} / ${2 * options.metalRounds} running, ${metal.warm.tookWarmSlot} warm` : 'not run',
        },
        {
          label: 'every burst create running, no host given more than its capacity',
          pass: metal !== undefined && metal.burst.running === options.metalBurst && metal.burst.peakHostShare <= 1,
          value: metal ? `${metal.burst.running} / ${options.metalBurst} running, peak ${(metal.burst.peakHostShare * 100).toFixed(0)} % of a host` : 'not run',
        },
      ]),
];
const machineSpeed = reference.stop();
const result = {
  date: new Date().toISOString(),
  quick: options.quick,
  machine: machineInfo(natsVersion, loadAtStart, machineSpeed),
  settings: { ...options, quota },
  topology: `${options.commandProcesses} commands + projector:vps + vps-reconciler as serve.ts processes; bench clients and the Acme emulator in the bench process`,
  commands: options.commands,
  accepted: load.accepted,
  quotaExceeded: load.quotaExceeded,
  conflictsRetried: load.conflictsRetried,
  commandSeconds: load.seconds,
  acceptedPerSecond: load.accepted / load.seconds,
  commandsPerSecond: options.commands / load.seconds,
  running: watch.runningAt.size,
  reconcileSeconds,
  runningPerSecond: watch.runningAt.size / reconcileSeconds,
  providerRequests,
  providerRequestsPerInstance,
  commandCpuSeconds,
  ...(metal ? { metalPools: { ...metal, loadAverageAtStart: metalLoad } } : {}),
  checks,
  errors,
  ...(baseline ? { baseline } : {}),
};
const int = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(`
VPS bench${options.quick ? ' (quick)' : ''}: ${int(options.commands)} vps.createInstance from ${options.tenants} tenants, ${options.concurrency} in flight
  accepted commands/s          ${int(result.acceptedPerSecond)}   (${int(load.accepted)} accepted in ${load.seconds.toFixed(1)} s; all decided ${int(result.commandsPerSecond)}/s)${baseline ? `\n  baseline accepted/s          ${int(baseline.acceptedPerSecond)}   (${baseline.date}, load ${baseline.loadAverage.start} → ${baseline.loadAverage.end})` : ''}
  quota conflicts retried      ${int(load.conflictsRetried)}   (CONCURRENCY_CONFLICT across ${options.commandProcesses} commands processes)
  QUOTA_EXCEEDED refusals      ${int(load.quotaExceeded)}
  reconciler to running        ${int(watch.runningAt.size)} in ${reconcileSeconds.toFixed(1)} s from the first accept = ${result.runningPerSecond.toFixed(0)} instances/s
  CPU s in the command phase   ${Object.entries(commandCpuSeconds)
    .map(([name, s]) => `${name} ${s.toFixed(1)}`)
    .join(', ')}
  provider requests/instance   ${providerRequestsPerInstance.toFixed(2)}   (${Object.entries(providerRequests)
    .map(([route, n]) => `${route} ${int(n)}`)
    .join(', ')})
${metal ? metalLines(metal, metalLoad) : ''}  machine speed                ${describeReferenceWork(machineSpeed)}
${checks.map((c) => `  ${c.pass ? 'PASS' : 'FAIL'}  ${c.label}: ${c.value}`).join('\n')}${errors.length ? `\nerrors:\n  ${errors.join('\n  ')}` : ''}`);
mkdirSync(dirname(options.out), { recursive: true });
writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
console.log(`written to ${options.out}`);
process.exit(checks.every((c) => c.pass) ? 0 : 1);

/** The metal-pool figures, warm against cold, as printed. */
function metalLines(metal: Awaited<ReturnType<typeof benchMetalPools>>, loadAverage: number): string {
  const row = (name: string, f: typeof metal.warm) =>
    `  metal ${name} creates         ${f.acceptedPerSecond.toFixed(1)} accepted/s, create → running p50 ${Math.round(f.createToRunningP50Ms)} ms, p99 ${Math.round(f.createToRunningP99Ms)} ms (${f.running}/${f.creates} running, ${f.tookWarmSlot} on a warm slot)\n`;
  const ratio = metal.cold.createToRunningP50Ms / metal.warm.createToRunningP50Ms;
  const b = metal.burst;
  const burst = `  metal burst (cold)           ${b.acceptedPerSecond.toFixed(1)} accepted/s, ${b.creates} at once all running in ${b.allRunningSeconds.toFixed(2)} s, create → running p50 ${Math.round(b.createToRunningP50Ms)} ms, p99 ${Math.round(b.createToRunningP99Ms)} ms\n`;
  return `${row('warm', metal.warm)}${row('cold', metal.cold)}  metal cold/warm p50          ${ratio.toFixed(2)}×   (${metal.rounds} rounds alternating, ${metal.warmSlots} slots kept, preparing costs ${metal.prepareMs} ms, load ${loadAverage})\n${burst}`;
}

/** The figures of an earlier run to compare with: the machine is shared, so its load average comes along. */
function baselineOf(earlier: {
  date: string;
  machine: { loadAverage: { start: number; end: number } };
  acceptedPerSecond: number;
  commandsPerSecond: number;
  conflictsRetried: number;
  runningPerSecond: number;
}) {
  const { date, machine, acceptedPerSecond, commandsPerSecond, conflictsRetried, runningPerSecond } = earlier;
  return { date, loadAverage: machine.loadAverage, acceptedPerSecond, commandsPerSecond, conflictsRetried, runningPerSecond };
}
