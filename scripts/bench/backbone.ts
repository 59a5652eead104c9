/**
 * `npm run bench [-- --quick]`: the backbone's throughput on this machine, against one nats-server it starts in a
 * temp dir: raw JetStream publish (the yardstick), event store appends, HTTP command round trips (API in a child
 * process), projector catch-up and a full read-model rebuild. Prints a table and writes bench/results/backbone.json.
 * Missed targets are reported, not fatal; any real error exits non-zero.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Streams } from '../../schemas/subjects.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { fastFill } from './fastFill.ts';
import { stopwatch, type Figure } from './figure.ts';
import { measureEventStoreAppend } from './measure/eventStoreAppend.ts';
import { measureHttpCommands } from './measure/httpCommands.ts';
import { measureProjectorCatchUp } from './measure/projectorCatchUp.ts';
import { measureRawPublish } from './measure/rawPublish.ts';
import { measureRebuild } from './measure/rebuild.ts';
import { parseOptions } from './options.ts';
import { fillMessage } from './payloads.ts';
import { machineInfo, report } from './report.ts';

const step = (what: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${what}\n`);

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const total = stopwatch();
  const root = mkdtempSync(join(tmpdir(), 'bc-bench-'));
  const dataDir = (name: string) => {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const server = await startNatsServer({ storeDir: join(root, 'nats') });
  try {
    const nc = await connectNats(server.url, 'bench');
    try {
      const config = loadConfig({}, { dataDir: dataDir('config'), natsUrl: server.url, logLevel: 'silent' });
      await ensureStreams(nc, config);
      const store = await EventStore.open(nc);
      const log = createLogger('bench', 'silent');
      const figures: Figure[] = [];
      const record = (f: Figure) => {
        figures.push(f);
        step(`  ${f.label}: ${Math.round(f.rate).toLocaleString('en-US')} ${f.unit} (${f.count} in ${f.seconds.toFixed(2)} s)`);
      };
      step(`nats-server ${nc.info?.version ?? '?'} at ${server.url}, store ${root}`);

      if (options.only.has('raw')) {
        step('raw js.publish');
        record(await measureRawPublish(nc, options.raw));
      }
      if (options.only.has('append')) {
        step('EventStore.append');
        record(await measureEventStoreAppend(store, options.append));
      }
      if (options.only.has('http')) {
        step('HTTP commands (API child process)');
        record(await measureHttpCommands({ natsUrl: server.url, dataDir: dataDir('api'), nodeArgs: options.apiNodeArgs, ...options.http }));
      }
      if (options.only.has('projector') || options.only.has('rebuild')) {
        // The projector and the rebuild read a stream of exactly the fill's events.
        await (await jetstreamManager(nc)).streams.purge(Streams.events.name);
        step(`filling ${Streams.events.name} with ${options.events.toLocaleString('en-US')} node events`);
        const fill = await fastFill(nc, options.events, fillMessage);
        step(`  filled in ${fill.seconds.toFixed(1)} s (${Math.round(options.events / fill.seconds).toLocaleString('en-US')} msg/s), seqs ${fill.firstSeq}..${fill.lastSeq}`);
        const target = { events: options.events, lastSeq: fill.lastSeq };
        if (options.only.has('projector')) {
          step('Projector catch-up');
          record(await measureProjectorCatchUp(store, log, { dataDir: dataDir('projector'), ...target }));
        }
        if (options.only.has('rebuild')) {
          step('Projector rebuild');
          record(await measureRebuild(store, log, { dataDir: dataDir('rebuild'), ...target }));
        }
      }
      report(figures, {
        quick: options.quick,
        machine: machineInfo(nc.info?.version ?? 'unknown'),
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
