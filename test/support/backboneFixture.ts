import type { NatsConnection } from '@nats-io/transport-node';
import { allProjections } from '../../projections/catalog.ts';
import { ProjectorGroup } from '../../services/projectors/projectorGroup.ts';
import type { Projector } from '../../services/projectors/projector.ts';
import { serveProjectorControl } from '../../services/projectors/projectorControl.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { ReadModelReader } from '../../projections/runtime/readModelReader.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { loadConfig, type Config } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { startTestNats, tempDir } from './natsServer.ts';

/** A read model of the shared group, or one a test runs on a `Projector` of its own. */
export type ReadModelHandle = Pick<Projector, 'projection' | 'db' | 'durable' | 'stop' | 'status' | 'rebuild'>;

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
  // The read models as the `projectors` service builds them: one group, one durable; a test may stop one read model
  // (`projectors.get(name).stop()`) or replace it with a `Projector` of its own.
  const group = new ProjectorGroup(
    store,
    allProjections.map((projection) => ({ projection, files: new ReadModelFiles(dir.path, projection.name) })),
    log,
  );
  const projectors = new Map<string, ReadModelHandle>(group.members.map((m) => [m.projection.name, m]));
  const readers = new Map(allProjections.map((p) => [p.name, new ReadModelReader(new ReadModelFiles(dir.path, p.name))]));
  if (options.projectors !== false) {
    await group.start();
    for (const m of group.members) serveProjectorControl(nc, m);
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
      await group.stop().catch(() => undefined);
      for (const p of projectors.values()) await p.stop().catch(() => undefined);
      await nc.close();
      await nats[Symbol.asyncDispose]();
      dir[Symbol.dispose]();
    },
  };
}
