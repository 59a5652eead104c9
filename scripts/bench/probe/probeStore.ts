import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../services/platform/config.ts';
import { connectNats } from '../../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../../services/platform/nats/streams.ts';
import { openEventStore } from '../../../services/stack/runtime.ts';

/** What an event-store probe starts from: its own nats-server in a temporary folder, the streams, and the store. */
export async function openProbeStore() {
  const root = mkdtempSync(join(tmpdir(), 'bc-probe-'));
  const server = await startNatsServer({ storeDir: join(root, 'nats') });
  const nc = await connectNats(server.url, 'probe');
  const config = loadConfig({}, { dataDir: root, natsUrl: server.url });
  await ensureStreams(nc, config);
  const store = await openEventStore(nc, config);
  const close = async () => {
    await nc.close();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  };
  return { server, nc, config, store, close };
}
