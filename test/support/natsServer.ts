import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServerProcess } from '../../services/platform/nats/embeddedServer.ts';

/** A nats-server of the test's own, on a free port with a temp store, removed on dispose. */
export async function startTestNats(): Promise<NatsServerProcess & AsyncDisposable & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'bc-nats-'));
  const server = await startNatsServer({ storeDir: join(dir, 'store') });
  return Object.assign(server, {
    dir,
    async [Symbol.asyncDispose]() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** A temp directory removed on dispose. */
export function tempDir(prefix = 'bc-test-'): { path: string } & Disposable {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}
