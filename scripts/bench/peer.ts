/**
 * `npm run bench:peer [-- --quick]`: the project's event store against emmett on PostgreSQL, the same workload on
 * both in one run: appends one at a time and `--in-flight` at once (latency p50/p99, throughput), and cold loads of
 * 4- and 100-event aggregates, with CPU per operation of the client (this process) and of the server (nats-server,
 * or the PostgreSQL cluster's processes, from /proc). Each workload runs in rounds, ours and emmett alternating and
 * the first of each pair rotating; the table shows the median of the rounds. Ours runs against a nats-server it
 * starts in a temp dir; emmett (and with `--async-commit` emmett again with `synchronous_commit=off`) against `BC_PEER_PG_URL`, or a `bc_peer_bench` database it creates (and drops) on
 * 127.0.0.1:5432 as `postgres`; where no PostgreSQL answers, emmett is skipped with the reason and ours still runs.
 * Prints a table and writes bench/results/peer.json with the machine's reference-work figure.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../services/platform/config.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { natsServerPid } from './cpuMeter.ts';
import { stopwatch } from './figure.ts';
import { emmett, ours, type Contender } from './peer/contenders.ts';
import { parsePeerOptions } from './peer/options.ts';
import { openPeerDatabase, type PeerDatabase } from './peer/postgres.ts';
import { medianRound, reportPeer, type PeerFigure } from './peer/report.ts';
import { appends, coldLoads, type RoundResult } from './peer/workload.ts';
import { ReferenceSampler } from './referenceWork.ts';
import { machineInfo } from './report.ts';

const step = (what: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${what}\n`);
const WARMUP_OPS = 30;

async function main(): Promise<void> {
  const options = parsePeerOptions(process.argv.slice(2));
  const total = stopwatch();
  const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
  // Sampled only before and after: the clients share the bench's process.
  const reference = new ReferenceSampler();
  const root = mkdtempSync(join(tmpdir(), 'bc-peer-bench-'));
  const server = await startNatsServer({ storeDir: join(root, 'nats') });
  let db: PeerDatabase | undefined;
  const contenders: Contender[] = [];
  try {
    const nc = await connectNats(server.url, 'bench-peer');
    try {
      process.env.BC_EVENT_KEY ??= randomBytes(32).toString('base64');
      const config = loadConfig({}, { dataDir: join(root, 'data'), natsUrl: server.url, logLevel: 'silent', eventKey: process.env.BC_EVENT_KEY });
      await ensureStreams(nc, config);
      const store = await openEventStore(nc, config);
      contenders.push(ours(store, natsServerPid(server.storeDir)));
      if (options.withoutState) contenders.push(ours(store, natsServerPid(server.storeDir), { carried: false }));
      const pgResult = await openPeerDatabase();
      let postgres: Record<string, unknown>;
      if (pgResult.ok) {
        db = pgResult.db;
        contenders.push(emmett(db));
        if (options.asyncCommit) contenders.push(emmett(db, { asyncCommit: true }));
        postgres = {
          url: db.url,
          serverVersion: db.serverVersion,
          serverCpu: db.serverCpuSeconds() === undefined ? 'unavailable (not on this host)' : 'cluster processes from /proc',
        };
        step(`nats-server ${nc.info?.version ?? '?'} at ${server.url}; PostgreSQL ${db.serverVersion} at ${db.url}`);
      } else {
        postgres = { skipped: pgResult.reason };
        step(`nats-server ${nc.info?.version ?? '?'} at ${server.url}`);
        step(`emmett on PostgreSQL skipped: ${pgResult.reason}. Set BC_PEER_PG_URL to measure it; ours runs alone.`);
      }

      const loads = [coldLoads(4, options.loads4), coldLoads(100, options.loads100)];
      const workloads = [appends(options.appendOps, 1), appends(options.appendOps * 2, options.inFlight), ...loads];
      for (const contender of contenders) {
        const seeded = stopwatch();
        for (const load of loads) await load.seed(contender);
        step(`${contender.name}: seeded the cold-load aggregates in ${seeded().toFixed(1)} s`);
        // JIT, connection pools, the server's caches and (emmett) its schema, before anything is timed.
        for (const workload of workloads) await workload.run(contender, -1, WARMUP_OPS);
      }

      const figures: PeerFigure[] = [];
      for (const workload of workloads) {
        const rounds = new Map<Contender, RoundResult[]>(contenders.map((c) => [c, []]));
        for (let round = 0; round < options.rounds; round++) {
          // Each contender goes first in turn: ours, emmett, ours, ... (with a third, each starts every third round).
          const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
          for (const contender of order) rounds.get(contender)!.push(await workload.run(contender, round));
        }
        for (const contender of contenders) {
          const median = medianRound(rounds.get(contender)!);
          figures.push({
            workload: workload.key,
            label: workload.label,
            contender: contender.name,
            server: contender.server,
            median,
            rounds: rounds.get(contender)!,
          });
          step(`  ${workload.label}, ${contender.name}: p50 ${median.p50Ms} ms, p99 ${median.p99Ms} ms, ${median.opsPerSecond}/s`);
        }
      }

      reportPeer(figures, {
        quick: options.quick,
        rounds: options.rounds,
        machine: machineInfo(nc.info?.version ?? 'unknown', loadAtStart, reference.stop()),
        postgres,
        file: resolve(options.out),
        totalSeconds: total(),
      });
    } finally {
      await nc.close();
    }
  } finally {
    for (const contender of contenders) await contender.close();
    await db?.release();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error('bench:peer failed:', err);
  process.exitCode = 1;
});
