/**
 * Probe: control-plane CPU the read models cost while commands trickle in at a fleet-like rate, per topology. Each
 * topology gets a fresh nats-server and data dir, the same command sequence (a site, node enrolments, maintenance
 * toggles) appended at `--rate` commands/s, and its projector processes (`serve.ts`) metered from /proc from the
 * moment they answer until every read model reached the end of the log.
 * `npx tsx scripts/bench/probe/projectorsCost.ts [--commands N] [--rate R] [--baseline PATH] [--out FILE] [topology…]`
 * where a topology is `+`-joined process names, each a comma-joined list of services (`projectors`, or
 * `projector:nodes+projector:sites+…` for one process each). A topology written `baseline:<topology>` runs the
 * serve.ts of another tree (`--baseline`, e.g. a checkout of the commit before a change), in the same run.
 */
import { writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { allProjections } from '../../../projections/catalog.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import { allCommands } from '../../../services/api/commandCatalog.ts';
import { CommandBus } from '../../../services/platform/commands/commandBus.ts';
import { loadConfig } from '../../../services/platform/config.ts';
import { connectNats } from '../../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../../services/platform/nats/streams.ts';
import { openEventStore } from '../../../services/stack/runtime.ts';
import { enrollPayload } from '../../../test/support/commandPayloads.ts';
import { processCpuSeconds } from '../cpuMeter.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    commands: { type: 'string', default: '3000' },
    rate: { type: 'string', default: '250' },
    baseline: { type: 'string' },
    out: { type: 'string', default: 'bench/results/projectorsCost.json' },
  },
});
const commands = Number(values.commands);
const rate = Number(values.rate);
// PROBE_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"): flags for the projector processes.
const nodeArgs = (process.env.PROBE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const topologies = positionals.length > 0 ? positionals : ['projectors', 'projector:nodes+projector:sites+projector:workflows+projector:secrets'];

const ownServe = fileURLToPath(new URL('../../../services/stack/serve.ts', import.meta.url));

async function measure(named: string) {
  const baseline = named.startsWith('baseline:');
  const topology = named.replace(/^baseline:/, '');
  const serve = baseline ? values.baseline : ownServe;
  if (!serve) throw new Error(`${named} needs --baseline PATH (a serve.ts)`);
  const root = mkdtempSync(join(tmpdir(), 'bc-probe-projectors-'));
  const server = await startNatsServer({ storeDir: join(root, 'nats') });
  const nc = await connectNats(server.url, 'probe');
  const config = loadConfig({}, { dataDir: join(root, 'data'), natsUrl: server.url, natsAuth: 'none', logLevel: 'warn' });
  await ensureStreams(nc, config);
  const store = await openEventStore(nc, config);
  const bus = new CommandBus(store, allCommands, { retries: config.commandRetries });
  const env = { ...process.env, BC_NATS_URL: server.url, BC_NATS_AUTH: 'none', BC_DATA_DIR: config.dataDir, BC_LOG_LEVEL: 'warn' };
  const processes = topology
    .split('+')
    .map((services) => spawn(process.execPath, [...nodeArgs, '--import', 'tsx', serve, ...services.split(',')], { env, stdio: 'ignore' }));
  const models = topology.includes('projectors') ? allProjections.map((p) => p.name) : topology.split(/[+,]/).map((s) => s.replace('projector:', ''));
  const checkpoints = async () =>
    Promise.all(
      models.map((name) =>
        nc.request(Subjects.projectorControl(name, 'status'), '', { timeout: 2_000 }).then(
          (m) => m.json<{ checkpoint: number }>().checkpoint,
          () => -1,
        ),
      ),
    );
  while ((await checkpoints()).some((c) => c < 0)) await sleep(200);
  const cpu0 = processes.map((p) => processCpuSeconds(p.pid!) ?? 0);
  const started = performance.now();
  await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'probe' });
  const perTick = Math.max(1, Math.round(rate / 50));
  for (let i = 0; i < commands; i += perTick) {
    const tick = sleep(20);
    await Promise.all(
      Array.from({ length: Math.min(perTick, commands - i) }, (_, k) => {
        const n = i + k;
        // A third enrolments, then maintenance toggles on the enrolled nodes: several events per node, as a fleet's steps.
        return n % 3 === 0
          ? bus.execute({ name: 'metal.enroll', payload: enrollPayload(`n${n / 3}`), actor: 'probe' })
          : bus.execute({ name: 'metal.setMaintenance', payload: { nodeId: `n${Math.floor(n / 3)}`, on: n % 3 === 1, reason: 'probe' }, actor: 'probe' });
      }),
    );
    await tick;
  }
  const last = await store.streamLastSequence();
  while ((await checkpoints()).some((c) => c < last)) await sleep(50);
  const seconds = (performance.now() - started) / 1000;
  const cpu = processes.map((p, i) => (processCpuSeconds(p.pid!) ?? 0) - cpu0[i]!);
  for (const p of processes) p.kill('SIGTERM');
  await sleep(500);
  await nc.close();
  await server.stop();
  rmSync(root, { recursive: true, force: true });
  const total = cpu.reduce((a, b) => a + b, 0);
  return {
    topology: named,
    serve,
    messages: last,
    seconds: Math.round(seconds * 10) / 10,
    cpuSeconds: cpu.map((c) => Math.round(c * 100) / 100),
    total,
    msPerMessage: (1000 * total) / last,
  };
}

const loadAtStart = loadavg()[0]!;
console.log(`${commands} commands at ${rate}/s; load average ${loadAtStart.toFixed(1)}`);
const results = [];
for (const topology of topologies) {
  const r = await measure(topology);
  results.push(r);
  console.log(
    `${r.topology}: ${r.messages} messages in ${r.seconds} s; CPU s per process ${r.cpuSeconds.join(' / ')} = ${r.total.toFixed(2)} s; ${r.msPerMessage.toFixed(3)} ms per message; load ${loadavg()[0]!.toFixed(1)}`,
  );
}
writeFileSync(
  values.out,
  `${JSON.stringify({ date: new Date().toISOString(), commands, rate, loadAverage: { start: loadAtStart, end: loadavg()[0] }, results }, null, 2)}\n`,
);
console.log(`written to ${values.out}`);
