import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startControlPlaneResultIntake } from '../../services/agents/resultIntake.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { RolloutController } from '../../services/processes/rolloutController/rolloutController.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startApi } from '../../test/support/apiFixture.ts';
import { MODULE, publishVersions, resolverVersion, rolloutPublisher } from '../../test/support/rolloutFleet.ts';
import { cpuMeter, natsServerPid } from './cpuMeter.ts';
import { ReferenceSampler } from './referenceWork.ts';
import { machineInfo } from './report.ts';
import { FleetWatch } from './rollout/fleetWatch.ts';
import { hostName } from './rollout/hostNames.ts';
import { startHostsProcess } from './rollout/hostsFleet.ts';
import { parseRolloutOptions } from './rollout/options.ts';
import { deployHosts, pinAll, rolloutEnds, startRollout } from './rollout/phases.ts';
import { rolloutReport } from './rollout/rolloutReport.ts';
import { timeSensorPass } from './rollout/sensorPass.ts';

/**
 * `npm run bench:rollout -- [--quick] [--hosts 1000] [--heartbeat-ms 2000] [--out FILE]`: real `bcd node` hosts on file
 * trees (a process of their own) take one module from v1 to v2 in 10 % waves after a 1-host canary, driven by the
 * rollout controller over a real nats-server; then a bad v3 (its probe fails) is rolled out and the breaker must halt
 * it on the canary. Exits 1 when a check fails. See bench/README.md.
 */
const options = parseRolloutOptions(process.argv.slice(2));
const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
const reference = new ReferenceSampler();
const dir = mkdtempSync(join(tmpdir(), 'bc-rollout-bench-'));
const env = await startApi();
await env.app.listen({ port: 0, host: '127.0.0.1' });
const blobBaseUrl = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
const registrations = startRegistrationService(env.nc, env.store, env.log);
const responder = serveCommands(env.nc, env.bus, env.log);
// As every `workflow-executor` runs it: the hosts' signed results are verified and stored, not left to be re-sent.
const intake = await startControlPlaneResultIntake(env.nc, { repository: env.bus.repository, bus: env.bus, log: env.log });
const fixtures = rolloutPublisher('bench');
const [v1, v2, bad] = [resolverVersion(fixtures, '1.0.0'), resolverVersion(fixtures, '1.1.0'), resolverVersion(fixtures, '1.2.0', 'exit 3')] as const;
await publishVersions(env.bus, env.app, fixtures, [v1, v2, bad]);

const siteId = 'dc-bench';
const hosts = Array.from({ length: options.hosts }, (_, i) => hostName(i));
const setupStart = Date.now();
await env.bus.execute({ name: 'site.create', payload: { siteId, name: siteId }, actor: 'bench' });
await deployHosts(env.bus, hosts, siteId, v1.params.version);
const fleet = await startHostsProcess({
  natsUrl: env.nats.url,
  siteId,
  count: hosts.length,
  dir,
  first: v1,
  heartbeatMs: options.heartbeatMs,
  perConnection: options.perConnection,
});
const setupSeconds = (Date.now() - setupStart) / 1000;
const pids = { 'nats-server': natsServerPid(env.nats.storeDir), hosts: fleet.pid };

const watch = new FleetWatch(env.nc);
const controller = new RolloutController(env.nc, env.store, { tickMs: 500, probeTimeoutMs: 5_000 }, env.log, { blobBaseUrl });
watch.listen(controller);
await controller.start();

// v1 → v2 across the fleet.
const goodCpu = cpuMeter(pids);
const goodStart = Date.now();
const observedBefore = watch.observed.length;
await startRollout(env.bus, hosts, v1.params.version, v2.params.version, options.wavePercent);
const converged = await rolloutEnds(env.bus, ['completed', 'halted'], 600_000);
const convergedAt = watch.firstEvent('RolloutCompleted', goodStart) ?? Date.now();
const good = {
  cpu: goodCpu(),
  seconds: (convergedAt - goodStart) / 1000,
  heartbeats: watch.observed.length - observedBefore,
  rollout: converged,
};

// Heartbeats alone (no rollout running): the control plane's CPU per verified heartbeat.
const idleCpu = cpuMeter(pids);
const idleFrom = watch.observed.length;
await new Promise((r) => setTimeout(r, options.heartbeatMs * (options.quick ? 3 : 5)));
const idle = { cpu: idleCpu(), heartbeats: watch.observed.length - idleFrom };

// v2 → v3, whose probe fails: the breaker must halt it on the canary.
await pinAll(env.bus, hosts, v2.params.version);
const badStart = Date.now();
await startRollout(env.bus, hosts, v2.params.version, bad.params.version, options.wavePercent);
const halted = await rolloutEnds(env.bus, ['halted', 'completed'], 300_000);
const haltedAt = watch.firstEvent('RolloutHalted', badStart) ?? Date.now();
// A late wave would show within a few controller ticks of the halt.
await new Promise((r) => setTimeout(r, 3_000));
const canary = [...(watch.applySent.get(bad.params.version)?.keys() ?? [])][0] ?? '(none)';
const canaryApplyAt = watch.applySent.get(bad.params.version)?.get(canary) ?? haltedAt;
const touched = watch.touchedBeyond(bad.params.version, canary);
const runs = (host: string) => readlinkSync(join(dir, 'hosts', host, 'modules', MODULE, 'current'));
const misplaced = hosts.filter((h) => runs(h) !== (h === canary ? bad.params.version : v2.params.version));

const sensor = timeSensorPass(
  hosts,
  siteId,
  watch.latest,
  { module: MODULE, version: v2.params.version, digest: v2.params.manifestSha256 },
  options.quick ? 5 : 20,
);

await controller.stop();
watch.stop();
await fleet.stop();
await registrations.stop();
await intake.stop();
responder.unsubscribe();
const natsVersion = (() => {
  try {
    return execFileSync('nats-server', ['--version']).toString().trim();
  } catch {
    return 'unknown';
  }
})();
const machine = machineInfo(natsVersion, loadAtStart, reference.stop());
await env[Symbol.asyncDispose]();
rmSync(dir, { recursive: true, force: true });

const fleetResults = 'bench/results/fleet.json';
const fleetCpuMsPerStep = existsSync(fleetResults)
  ? (JSON.parse(readFileSync(fleetResults, 'utf8')) as { controlPlaneCpuMsPerStep?: number }).controlPlaneCpuMsPerStep
  : undefined;
const result = rolloutReport({
  options,
  machine,
  setupSeconds,
  hosts,
  watch,
  good,
  idle,
  bad: { rollout: halted, canary, canaryApplyAt, haltedAt, touched, misplaced },
  sensor,
  fleetCpuMsPerStep,
  versions: { from: v1.params.version, to: v2.params.version, bad: bad.params.version },
});
console.log(JSON.stringify({ ...result, machine: undefined }, null, 2));
mkdirSync(dirname(options.out), { recursive: true });
writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
process.exit(result.checks.every((c) => c.pass) ? 0 : 1);
