import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { natsReachable } from '../../services/platform/nats/connect.ts';
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

  it('says how to install nats-server when the binary is missing', async () => {
    using dir = tempDir();
    const start = startNatsServer({ storeDir: dir.path, binary: 'nats-server-that-does-not-exist' });
    await expect(start).rejects.toBeInstanceOf(NatsServerMissingError);
    await expect(start).rejects.toThrow(/apt-get install -y nats-server/);
  });
});
