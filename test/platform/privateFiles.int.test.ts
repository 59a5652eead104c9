import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections/catalog.ts';
import { ProjectorGroup } from '../../services/projectors/projectorGroup.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { tempDir } from '../support/natsServer.ts';

/** Every folder and file under `dir` that others may read, write or enter, with its mode. */
function readableByOthers(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    const stat = statSync(path);
    const mode = stat.mode & 0o777;
    if (mode !== (stat.isDirectory() ? 0o700 : 0o600)) found.push(`${relative(dir, path) || '.'} ${mode.toString(8)}`);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  walk(dir);
  return found;
}

describe('private data files', () => {
  it('keeps the NATS store and the read models (with -wal and -shm) 0700/0600, including what was there before', { timeout: 60_000 }, async () => {
    // The process's own mask as a shell usually leaves it: what it creates would be 0755/0644.
    const umask = process.umask(0o022);
    using dir = tempDir();
    const storeDir = join(dir.path, 'nats');
    const readModels = join(dir.path, 'readmodels');
    // As an older version left them: world-readable folders and files.
    for (const folder of [join(storeDir, 'jetstream'), join(readModels, 'nodes')]) mkdirSync(folder, { recursive: true, mode: 0o755 });
    writeFileSync(join(storeDir, 'jetstream', 'old.blk'), 'log', { mode: 0o644 });
    writeFileSync(join(readModels, 'nodes', 'nodes-old.db-wal'), 'wal', { mode: 0o644 });
    for (const folder of [storeDir, join(storeDir, 'jetstream'), readModels, join(readModels, 'nodes')]) chmodSync(folder, 0o755);

    const nats = await startNatsServer({ storeDir });
    try {
      const config = loadConfig({}, { dataDir: dir.path, natsUrl: nats.url, natsAuth: 'none', logLevel: 'silent' });
      const nc = await connectNats(nats.url, 'test');
      try {
        await ensureStreams(nc, config);
        const store = await openEventStore(nc, config);
        const log = createLogger('test', 'silent');
        const group = new ProjectorGroup(
          store,
          allProjections.map((projection) => ({ projection, files: new ReadModelFiles(dir.path, projection.name) })),
          log,
        );
        await group.start();
        try {
          const bus = new CommandBus(store, allCommands, { retries: 3 });
          const { seq } = await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
          await expect.poll(async () => (await Promise.all(group.members.map(async (m) => (await m.status()).checkpoint))).every((c) => c >= seq)).toBe(true);
          // Files SQLite and nats-server made while running: the read models' WAL and shared memory, the streams' blocks.
          const created = (root: string, pattern: RegExp) =>
            readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((path) => pattern.test(path)).length;
          expect(created(readModels, /-(wal|shm)$/)).toBeGreaterThan(1);
          expect(created(storeDir, /\.blk$/)).toBeGreaterThan(1);
          expect([...readableByOthers(storeDir), ...readableByOthers(readModels)]).toEqual([]);
        } finally {
          await group.stop();
        }
      } finally {
        await nc.close();
      }
    } finally {
      await nats.stop();
      process.umask(umask);
    }
  });
});
