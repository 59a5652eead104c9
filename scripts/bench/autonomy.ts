import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { PassMarker } from '../../schemas/autonomy/signals.ts';
import { Streams } from '../../schemas/subjects.ts';
import { firstLaneBindings } from '../../services/autonomy/bindings.ts';
import { builtinPolicies, PolicyCatalog } from '../../services/autonomy/policies.ts';
import { defineSensor, defaultSensorSettings } from '../../services/autonomy/sensors/sensor.ts';
import { firstLaneSensors, nodeStateSensor } from '../../services/autonomy/sensors/firstLanes.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { AutonomyEngine } from '../../services/processes/autonomyEngine/engine.ts';
import { FleetSensors } from '../../services/processes/fleetSensors/fleetSensors.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { ReferenceSampler } from './referenceWork.ts';
import { machineInfo } from './report.ts';
import { SimulatedFleet } from './autonomy/fleet.ts';
import { waitForEngine } from '../../test/autonomy/passes.ts';

/**
 * `npm run bench:autonomy -- [--nodes 1000] [--passes 30] [--steady 5]`: a simulated fleet (5 % BMC loss, 2 % failed
 * nodes, 1 % flapping each pass, the node-state sensor crashing every 10th pass) through `fleet-sensors` and two
 * `autonomy-engine` replicas over two command buses, on a nats-server of its own. The baseline, measured in the same
 * run, is the same fleet with no faults. Fails when an invariant breaks.
 */
const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000' },
    passes: { type: 'string', default: '30' },
    steady: { type: 'string', default: '5' },
    budget: { type: 'string', default: '50' },
    out: { type: 'string', default: 'bench/results/autonomy.json' },
  },
});
const size = Number(values.nodes);
const passes = Number(values.passes);
const steadyPasses = Number(values.steady);
const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
// How fast the machine ran (bench/README.md, "Machine speed"): sampled before and after, never during what is timed.
const reference = new ReferenceSampler();
const dir = mkdtempSync(join(tmpdir(), 'bc-autonomy-bench-'));
const server = await startNatsServer({ storeDir: join(dir, 'store') });
const config = loadConfig({}, { dataDir: dir, natsUrl: server.url, natsAuth: 'none', logLevel: 'silent' });
const nc = await connectNats(server.url, 'bench');
await ensureStreams(nc, config);
const store = await openEventStore(nc, config);
const log = createLogger('bench', 'silent');
const responders = [0, 1].map(() => serveCommands(nc, new CommandBus(store, allCommands, { retries: 20 }), log));
const bus = new CommandBus(store, allCommands, { retries: 20 });
await bus.execute({ name: 'site.create', payload: { siteId: 'sim', name: 'simulated' }, actor: 'bench' });

const fleet = new SimulatedFleet(size, { bmcLoss: 0.05, failed: 0.02, flapping: 0.01, seed: 42 });
for (let i = 0; i < fleet.nodes.length; i += 50) {
  await Promise.all(
    fleet.nodes.slice(i, i + 50).map((n) =>
      bus.execute({
        name: 'metal.enroll',
        payload: {
          nodeId: n.nodeId,
          siteId: 'sim',
          // One BMC system per node, as a real fleet has (enrolment refuses a system another node holds).
          bmc: { address: `https://10.0.0.1/redfish/v1/Systems/${n.nodeId}`, credentialsRef: 'secret:sim' },
          hardwareProfile: 'default',
          macs: ['52:54:00:00:00:01'],
        },
        actor: 'bench',
      }),
    ),
  );
}

let passNo = 0;
let crashing = false;
const crashingNodeState = defineSensor({
  ...nodeStateSensor,
  assess: (s, settings) => {
    if (crashing) throw new Error('injected sensor crash');
    return nodeStateSensor.assess(s, settings);
  },
});
const sensors = [firstLaneSensors[0], crashingNodeState, ...firstLaneSensors.slice(2)];
let faults = true;
const healthy = new SimulatedFleet(size, { bmcLoss: 0, failed: 0, flapping: 0, seed: 42 });
const fleetSensors = new FleetSensors(
  nc,
  { sensors, settings: defaultSensorSettings, tickMs: 60_000, snapshot: async (now) => (faults ? fleet : healthy).snapshot(now) },
  log,
);
const policies = new PolicyCatalog(builtinPolicies);
const engineOptions = { policies, bindings: firstLaneBindings, sensors, settleMs: 0, budget: Number(values.budget), budgetWindowMs: 3_600_000 };
const engines = [new AutonomyEngine(nc, store, engineOptions, log), new AutonomyEngine(nc, store, engineOptions, log)];
for (const e of engines) await e.start();

// Decision events as they arrive, to time them against their pass.
const published = new Map<string, number>();
const decisionAt: number[] = [];
let lastPassAt = 0;
const startedAt: number[] = [];
const watcher = await jetstream(nc).consumers.get(Streams.events.name, { filter_subjects: 'bc.evt.autonomy.decision.>', deliver_policy: DeliverPolicy.New });
const watched = await watcher.consume();
void (async () => {
  for await (const m of watched) {
    const entry = store.decode({ seq: m.seq, subject: m.subject, headers: m.headers, data: m.data });
    if (!('batch' in entry) || !entry.batch) continue;
    for (const e of entry.batch.events) {
      const data = e.data as { passId?: string };
      if (e.type === 'DecisionOpened' && data.passId && published.has(data.passId)) decisionAt.push(Date.now() - published.get(data.passId)!);
      if (e.type === 'DecisionRemediationStarted') startedAt.push(Date.now() - lastPassAt);
    }
  }
})();
async function runPass(): Promise<{ marker: PassMarker; ms: number; events: number }> {
  crashing = faults && passNo % 10 === 9;
  passNo++;
  const before = await store.streamLastSequence();
  const t0 = Date.now();
  lastPassAt = t0;
  const marker = await fleetSensors.pass(new Date(t0));
  published.set(marker.passId, t0);
  await waitForEngine(nc, 120_000);
  return { marker, ms: Date.now() - t0, events: (await store.streamLastSequence()) - before };
}

// Baseline: the same fleet with no faults.
faults = false;
const baselineCpu0 = process.cpuUsage();
const baseline: Awaited<ReturnType<typeof runPass>>[] = [];
for (let i = 0; i < steadyPasses; i++) baseline.push(await runPass());
const baselineCpu = process.cpuUsage(baselineCpu0);

faults = true;
const cpu0 = process.cpuUsage();
const faulted: Awaited<ReturnType<typeof runPass>>[] = [];
for (let i = 0; i < passes; i++) {
  fleet.advance(false);
  const result = await runPass();
  faulted.push(result);
}
const cpu = process.cpuUsage(cpu0);
// Steady: the faults stay as they are (no flapping, no crash).
fleet.advance(true);
const settling = await runPass();
const steady: Awaited<ReturnType<typeof runPass>>[] = [];
for (let i = 0; i < steadyPasses; i++) {
  crashing = false;
  steady.push(await runPass());
}
await watched.close();

// Invariants, read back from the log.
const jsm = await jetstreamManager(nc);
const subjects = async (filter: string) => Object.keys((await jsm.streams.info(Streams.events.name, { subjects_filter: filter })).state.subjects ?? {});
const violations: string[] = [];
const episodes = new Map<string, number>();
const distinctKeys = new Set<string>();
let effective = 0;
const categoryOf = new Map<string, string>();
const markers = new Map([...baseline, ...faulted, settling, ...steady].map((r) => [r.marker.passId, r.marker]));
const sensorsFor = (category: string) => {
  const kinds = new Set(firstLaneBindings.filter((b) => b.category === category).map((b) => b.signal));
  return sensors.filter((x) => x.emits.some((k) => kinds.has(k))).map((x) => x.name);
};
for (const subject of await subjects('bc.evt.autonomy.decision.*')) {
  for await (const b of store.readAfter(subject, 0)) {
    for (const e of b.batch.events) {
      const d = e.data as {
        decisionId: string;
        episode: number;
        category?: string;
        key?: string;
        effective?: boolean;
        passId?: string;
        signalPresent?: boolean;
        sensorOk?: boolean;
      };
      if (e.type === 'DecisionOpened') {
        distinctKeys.add(`${d.category}/${d.key}`);
        categoryOf.set(d.decisionId, d.category!);
      }
      if (e.type === 'DecisionRemediationStarted') episodes.set(`${d.decisionId}#${d.episode}`, (episodes.get(`${d.decisionId}#${d.episode}`) ?? 0) + 1);
      if (e.type === 'DecisionOutcomeRecorded' && d.effective) {
        effective++;
        // Checked against the pass marker itself, not only against what the decision recorded.
        const marker = markers.get(d.passId!);
        const sensorsOfCategory = sensorsFor(categoryOf.get(d.decisionId) ?? '');
        const sensorsOk = marker !== undefined && sensorsOfCategory.every((name) => marker.sensors.find((r) => r.sensor === name)?.ok === true);
        if (d.signalPresent || !d.sensorOk || !sensorsOk) violations.push(`false effective: ${d.decisionId} in ${d.passId}`);
      }
    }
  }
}
const decisions = (await subjects('bc.evt.autonomy.decision.*')).length;
if (decisions !== distinctKeys.size) violations.push(`decisions ${decisions} ≠ distinct keys ${distinctKeys.size}`);
for (const [episode, n] of episodes) if (n > 1) violations.push(`${n} remediations in episode ${episode}`);
for (const subject of await subjects('bc.evt.autonomy.budget.*')) {
  let consumed = 0;
  let limit = 0;
  for await (const b of store.readAfter(subject, 0))
    for (const e of b.batch.events) {
      consumed++;
      limit = (e.data as { limit: number }).limit;
    }
  if (consumed > limit) violations.push(`budget overshoot on ${subject}: ${consumed} > ${limit}`);
}

for (const e of engines) await e.stop();
for (const r of responders) r.unsubscribe();
await nc.close();
await server.stop();
rmSync(dir, { recursive: true, force: true });

const pct = (xs: number[], p: number) => (xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length - 1) * p))]!);
const totalSignals = faulted.reduce((n, r) => n + r.marker.signalCount, 0);
const engineMs = faulted.reduce((n, r) => n + r.ms, 0);
const cpuMs = (cpu.user + cpu.system) / 1000;
const result = {
  benchmark: 'autonomy',
  machine: machineInfo(
    (() => {
      try {
        return execFileSync('nats-server', ['--version']).toString().trim();
      } catch {
        return 'unknown';
      }
    })(),
    loadAtStart,
    reference.stop(),
  ),
  setup: {
    nodes: size,
    passes,
    steadyPasses,
    budgetPerOwnerPerHour: Number(values.budget),
    faults: { bmcLoss: 0.05, failed: 0.02, flappingPerPass: 0.01, sensorCrash: 'node-state, every 10th pass' },
    engineReplicas: 2,
    commandBuses: 2,
  },
  figures: {
    signalsPerSecond: Math.round((totalSignals / engineMs) * 1000),
    passToDecisionMs: { p50: pct(decisionAt, 0.5), p99: pct(decisionAt, 0.99), samples: decisionAt.length },
    passToRemediationStartedMs: {
      p50: pct(startedAt, 0.5),
      p99: pct(startedAt, 0.99),
      samples: startedAt.length,
      note: 'auto lane (BMC maintenance): it starts no workflow, so the figure is pass → DecisionRemediationStarted',
    },
    cpuMsPerSignal: Math.round((cpuMs / Math.max(1, totalSignals)) * 1000) / 1000,
    cpuScope: 'this process: sensors, both engines, both command buses (nats-server excluded)',
    eventsPerSteadyPass: steady.map((r) => r.events),
    signalsTotal: totalSignals,
    decisions,
    effectiveOutcomes: effective,
  },
  baseline: {
    description: 'the same fleet with no faults, same run',
    msPerPass: Math.round(baseline.reduce((n, r) => n + r.ms, 0) / Math.max(1, baseline.length)),
    cpuMsPerPass: Math.round((baselineCpu.user + baselineCpu.system) / 1000 / Math.max(1, baseline.length)),
    eventsPerPass: baseline.map((r) => r.events),
  },
  faultedMsPerPass: Math.round(engineMs / Math.max(1, passes)),
  invariants: { ok: violations.length === 0, violations },
};
console.log(JSON.stringify(result.figures, null, 2));
console.log(`baseline ${JSON.stringify(result.baseline)}; invariants ${violations.length === 0 ? 'hold' : `BROKEN: ${violations.join('; ')}`}`);
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
process.exit(violations.length === 0 ? 0 : 1);
