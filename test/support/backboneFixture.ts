import type { NatsConnection } from '@nats-io/transport-node';
import { allProjections } from '../../projections/catalog.ts';
import { Projector } from '../../projections/runtime/projector.ts';
import { serveProjectorControl } from '../../projections/runtime/projectorControl.ts';
import { ReadModelFiles } from '../../projections/runtime/readModelFiles.ts';
import { ReadModelReader } from '../../projections/runtime/readModelReader.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { loadConfig, type Config } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { startTestNats, tempDir } from './natsServer.ts';

/** A real nats-server, the declared streams, a command bus and (optionally started) projectors, all disposable. */
export async function startBackbone(options: { projectors?: boolean; config?: Partial<Config> } = {}) {
  const nats = await startTestNats();
  const dir = tempDir('bc-data-');
  const config = loadConfig({}, { dataDir: dir.path, natsUrl: nats.url, natsAuth: 'none', logLevel: 'silent', ...options.config });
  const nc: NatsConnection = await connectNats(nats.url, 'test');
  await ensureStreams(nc, config);
  const store = await openEventStore(nc, config);
  const bus = new CommandBus(store, allCommands, { retries: config.commandRetries });
  const log = createLogger('test', 'silent');
  const projectors = new Map<string, Projector>();
  const readers = new Map<string, ReadModelReader>();
  for (const projection of allProjections) {
    const files = new ReadModelFiles(dir.path, projection.name);
    projectors.set(projection.name, new Projector(store, projection, files, log));
    readers.set(projection.name, new ReadModelReader(files));
  }
  if (options.projectors !== false) {
    for (const p of projectors.values()) {
      await p.start();
      serveProjectorControl(nc, p);
    }
  }
  return {
    nats,
    nc,
    store,
    bus,
    config,
    dataDir: dir.path,
    projectors,
    readers,
    log,
    async [Symbol.asyncDispose]() {
      for (const r of readers.values()) r.close();
      for (const p of projectors.values()) await p.stop().catch(() => undefined);
      await nc.close();
      await nats[Symbol.asyncDispose]();
      dir[Symbol.dispose]();
    },
  };
}
