import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { freePort } from '../support/freePort.ts';
import { tempDir } from '../support/natsServer.ts';
import { startServeProcess } from '../support/serveProcess.ts';

/**
 * A listener on the NATS port that is no working server yet: `silent` accepts and never answers (a stopped or
 * overloaded server: the kernel completes the handshake, no INFO comes, the client's dial times out), `hangUp` closes
 * at once (a server going down). It counts the dials it saw.
 */
async function brokenServer(port: number, behaviour: 'silent' | 'hangUp') {
  const sockets = new Set<Socket>();
  let dials = 0;
  const server = createServer((socket) => {
    dials++;
    if (behaviour === 'hangUp') return socket.destroy();
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    dials: () => dials,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('a service process starting while its NATS server does not answer', () => {
  for (const behaviour of ['silent', 'hangUp'] as const) {
    it(
      `keeps dialling a server that is ${behaviour === 'silent' ? 'stopped or overloaded' : 'going down'}, then starts once it answers, without exiting`,
      { timeout: 180_000 },
      async () => {
        using dir = tempDir();
        const port = await freePort();
        const broken = await brokenServer(port, behaviour);
        const serving = startServeProcess(['commands'], { BC_NATS_URL: `nats://127.0.0.1:${port}`, BC_NATS_AUTH: 'none', BC_DATA_DIR: dir.path }, 150_000);
        let exited = false;
        serving.catch(() => (exited = true));
        // Before, the first failed dial ended the process: there was never a third.
        await expect.poll(() => exited || broken.dials() >= 3, { timeout: 120_000, interval: 100 }).toBe(true);
        expect(exited).toBe(false);
        await broken.close();
        const nats = await startNatsServer({ storeDir: join(dir.path, 'nats'), port });
        try {
          await using serve = await serving;
          expect([serve.starts, serve.exitCode]).toEqual([1, null]);
        } finally {
          await nats.stop();
        }
      },
    );
  }
});
