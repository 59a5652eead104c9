/**
 * The HTTP API as a process of its own, for the bench's command round trips: nats connection, event store, command
 * bus, read model readers and `buildApi`, listening on a free port. Prints `{"port":N}` on stdout once listening;
 * exits cleanly on SIGTERM (so `--cpu-prof` writes its profile).
 *
 * Env: BC_NATS_URL (required), BENCH_DATA_DIR (required). Bench variants of proposed product fixes (off by default):
 * BENCH_PIPELINED_APPEND=1 (appends through variants/pipelinedAppender.ts), BENCH_STUB_BUS=1 (no NATS at all behind
 * the routes, see variants/stubBus.ts).
 */
import { allProjections } from '../../projections/catalog.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { ReadModelReader } from '../../projections/runtime/readModelReader.ts';
import { createMetrics } from '../../services/api/metrics.ts';
import { buildApi } from '../../services/api/server.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { withPipelinedAppend } from './variants/pipelinedAppender.ts';
import { stubBus } from './variants/stubBus.ts';

const natsUrl = process.env.BC_NATS_URL;
const dataDir = process.env.BENCH_DATA_DIR;
if (!natsUrl || !dataDir) throw new Error('apiServer needs BC_NATS_URL and BENCH_DATA_DIR');

// The benchmark measures the command path: no token look-up, no rate limit.
// The bench's processes share one event key (BC_EVENT_KEY), so they read each other's events.
const config = loadConfig(
  {},
  { dataDir, natsUrl, logLevel: 'silent', httpPort: 0, apiAuth: 'off', apiRateLimitPerMinute: 0, eventKey: process.env.BC_EVENT_KEY },
);
const log = createLogger('bench-api', 'silent');
const nc = await connectNats(natsUrl, 'bench-api');
const store = await openEventStore(nc, config);
const realBus = new CommandBus(process.env.BENCH_PIPELINED_APPEND === '1' ? withPipelinedAppend(store) : store, allCommands, {
  retries: config.commandRetries,
});
const bus = process.env.BENCH_STUB_BUS === '1' ? stubBus(realBus) : realBus;
const readers = new Map(allProjections.map((p) => [p.name, new ReadModelReader(new ReadModelFiles(dataDir, p.name))] as const));
const app = await buildApi({ config, nc, store, bus, readers, metrics: createMetrics() }, log);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (!address || typeof address === 'string') throw new Error(`unexpected listen address ${String(address)}`);
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await app.close();
  for (const r of readers.values()) r.close();
  await nc.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
