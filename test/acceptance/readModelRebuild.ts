import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { allProjections } from '../../projections/catalog.ts';
import { Projector } from '../../services/projectors/projector.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { dumpProjectors, waitForCheckpoint } from '../properties/harness.ts';
import { dumpTables, type TableDump } from '../properties/tables.ts';
import type { apiClient } from '../support/apiClient.ts';
import { tempDir } from '../support/natsServer.ts';
import { openReadModel } from '../support/readModelDb.ts';

/**
 * "No event lost": every read model rebuilt from the whole log by fresh projectors (own durables, own files), and the
 * live read models once the stack's projectors report the log's last sequence (`/readyz`), as table dumps to compare.
 */
export async function rebuiltAndLiveReadModels(options: {
  nc: NatsConnection;
  dataDir: string;
  natsUrl: string;
  client: ReturnType<typeof apiClient>;
}): Promise<{ rebuilt: Record<string, TableDump>; live: Record<string, TableDump> }> {
  const { nc, dataDir, natsUrl, client } = options;
  const config = loadConfig({}, { dataDir, natsUrl, natsAuth: 'none', logLevel: 'silent' });
  const store = await openEventStore(nc, config);
  const last = await store.streamLastSequence();
  using fresh = tempDir('bc-rebuild-');
  const log = createLogger('rebuild', 'silent');
  const projectors = allProjections.map(
    (projection) =>
      new Projector(store, { ...projection, name: `${projection.name}_rebuild` }, new ReadModelFiles(fresh.path, `${projection.name}_rebuild`), log),
  );
  try {
    for (const p of projectors) await p.start();
    for (const p of projectors) await waitForCheckpoint(p, last, 60_000, store);
    for (let i = 0; ; i++) {
      const ready = (await client.getJson('/readyz')) as { projections: { checkpoint: number }[] };
      if (ready.projections.every((p) => p.checkpoint >= last)) break;
      if (i > 300) throw new Error(`live read models behind ${last}: ${JSON.stringify(ready.projections)}`);
      await sleep(100);
    }
    const live = Object.fromEntries(
      allProjections.map((p) => {
        using db = openReadModel(dataDir, p.name);
        return [p.name, dumpTables(db)];
      }),
    );
    const rebuilt = Object.fromEntries(Object.entries(dumpProjectors(projectors)).map(([name, dump]) => [name.replace(/_rebuild$/, ''), dump]));
    return { rebuilt, live };
  } finally {
    for (const p of projectors) await p.stop();
  }
}
