/**
 * `npm run bench [-- --quick] [-- --variants]`: the backbone's throughput on this machine, against one nats-server it
 * starts in a temp dir: raw JetStream publish (the yardstick), event store appends, HTTP command round trips (API in
 * a child process), projector catch-up, a full read-model rebuild and cold aggregate loads (4 and 100 events, against
 * the old read of a direct get per event). Prints a table and writes
 * bench/results/backbone.json. Missed targets are reported, not fatal; any real error exits non-zero.
 * `--variants` adds rows for bench copies of proposed product fixes (scripts/bench/variants/).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { meterProcess, natsServerPid } from './cpuMeter.ts';
import { stopwatch, type Figure } from './figure.ts';
import { measureColdLoads } from './measure/coldLoad.ts';
import { measureHttpCommands } from './measure/httpCommands.ts';
import { parseOptions } from './options.ts';
import { readPath } from './phases/readPath.ts';
import { ReferenceSampler } from './referenceWork.ts';
import { writePath } from './phases/writePath.ts';
import { machineInfo, report } from './report.ts';

/** API process variants (env flags read by apiServer.ts), measured next to the product with `--variants`. */
const API_VARIANTS: { name: string; env: Record<string, string> }[] = [
  { name: 'pipelined appender', env: { BENCH_PIPELINED_APPEND: '1' } },
  { name: 'stub bus, HTTP layer only', env: { BENCH_STUB_BUS: '1' } },
];

const step = (what: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${what}\n`);

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const total = stopwatch();
  const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
  // Sampled when the bench starts and ends only: a sample in between would take the bench process's CPU mid-measurement.
  const reference = new ReferenceSampler();
  const root = mkdtempSync(join(tmpdir(), 'bc-bench-'));
  const dataDir = (name: string) => {
    const dir = join(root, 'data', name.replace(/[^A-Za-z0-9_-]+/g, '-'));
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const server = await startNatsServer({ storeDir: join(root, 'nats') });
  meterProcess('nats', natsServerPid(server.storeDir));
  try {
    const nc = await connectNats(server.url, 'bench');
    try {
      // One event key for this process and the API processes it starts (they inherit BC_EVENT_KEY).
      process.env.BC_EVENT_KEY ??= randomBytes(32).toString('base64');
      const config = loadConfig({}, { dataDir: dataDir('config'), natsUrl: server.url, logLevel: 'silent', eventKey: process.env.BC_EVENT_KEY });
      await ensureStreams(nc, config);
      const store = await openEventStore(nc, config);
      const log = createLogger('bench', 'silent');
      const figures: Figure[] = [];
      const record = (list: Figure[]) => {
        for (const f of list) {
          figures.push(f);
          step(`  ${f.label}: ${Math.round(f.rate).toLocaleString('en-US')} ${f.unit} (${f.count} in ${f.seconds.toFixed(2)} s)`);
        }
      };
      step(`nats-server ${nc.info?.version ?? '?'} at ${server.url}, store ${root}`);

      record(await writePath(nc, store, options, step));
      if (options.only.has('http')) {
        const http = { natsUrl: server.url, nodeArgs: options.apiNodeArgs, ...options.http };
        step('HTTP commands (API child process)');
        record([await measureHttpCommands({ ...http, dataDir: dataDir('api') })]);
        for (const [i, variant] of (options.variants ? API_VARIANTS : []).entries()) {
          step(`HTTP commands, variant: ${variant.name}`);
          record([await measureHttpCommands({ ...http, dataDir: dataDir(`api-v${i}`), variant })]);
        }
      }
      record(await readPath(nc, store, log, options, dataDir, step));
      if (options.only.has('coldLoad')) {
        step('Cold aggregate loads (on the stream the read side filled)');
        record(await measureColdLoads(store, { loads: options.coldLoads }, step));
      }

      report(figures, {
        quick: options.quick,
        machine: machineInfo(nc.info?.version ?? 'unknown', loadAtStart, reference.stop()),
        file: resolve(options.out),
        totalSeconds: total(),
      });
    } finally {
      await nc.close();
    }
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error('bench failed:', err);
  process.exitCode = 1;
});
