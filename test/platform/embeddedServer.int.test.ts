import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats, natsReachable } from '../../services/platform/nats/connect.ts';
import { NatsServerMissingError, startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { tempDir } from '../support/natsServer.ts';

describe('embedded nats-server', () => {
  it('starts on a free port, restarts on the same port, and stops', async () => {
    using dir = tempDir();
    const server = await startNatsServer({ storeDir: join(dir.path, 'store') });
    try {
      expect(await natsReachable(server.url)).toBe(true);
      const port = server.port;
      await server.restart();
      expect(server.port).toBe(port);
      expect(await natsReachable(server.url)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(await natsReachable(server.url)).toBe(false);
  });

  it('comes back by itself after a crash when supervised, on the same port with the same store', async () => {
    using dir = tempDir();
    const server = await startNatsServer({ storeDir: join(dir.path, 'store') });
    const endSupervision = server.supervise({ log: createLogger('test', 'silent'), backoff: { initialMs: 200 } });
    const nc = await connectNats(server.url, 'supervision-test');
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'KEPT', subjects: ['kept.>'] });
      const port = server.port;
      await server.kill();
      expect(await natsReachable(server.url)).toBe(false);
      await expect.poll(() => natsReachable(server.url), { timeout: 10_000 }).toBe(true);
      expect(server.port).toBe(port);
      // The client reconnects on its own and finds the stream the store kept.
      await expect.poll(async () => (await jsm.streams.info('KEPT').catch(() => undefined))?.config.name, { timeout: 10_000 }).toBe('KEPT');
      // Once supervision ended (the stack shutting down), an exit stays an exit.
      endSupervision();
      await server.kill();
      await sleep(600);
      expect(await natsReachable(server.url)).toBe(false);
      await server.restart();
    } finally {
      await nc.close();
      await server.stop();
    }
    // A stop is not a crash: nothing starts it again.
    await sleep(600);
    expect(await natsReachable(server.url)).toBe(false);
  });

  it('says how to install nats-server when the binary is missing', async () => {
    using dir = tempDir();
    const start = startNatsServer({ storeDir: dir.path, binary: 'nats-server-that-does-not-exist' });
    await expect(start).rejects.toBeInstanceOf(NatsServerMissingError);
    await expect(start).rejects.toThrow(/apt-get install -y nats-server/);
  });
});
