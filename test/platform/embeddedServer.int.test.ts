import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
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

  it('picks another port when the one it picked was taken before the server bound it, and not a port it was given', async () => {
    using dir = tempDir();
    // A nats-server that finds its port taken once (as when another process binds it between pick and start).
    const binary = join(dir.path, 'nats-server-once-refused');
    const launches = join(dir.path, 'launches');
    writeFileSync(
      binary,
      [
        '#!/bin/sh',
        `echo "$*" >> '${launches}'`,
        `if [ ! -e '${dir.path}/refused' ]; then touch '${dir.path}/refused'; echo '[FTL] Error listening on port: bind: address already in use' >&2; exit 1; fi`,
        'exec nats-server "$@"',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const server = await startNatsServer({ storeDir: join(dir.path, 'store'), binary });
    try {
      const ports = readFileSync(launches, 'utf8')
        .trim()
        .split('\n')
        .map((args) => Number(/-p (\d+)/.exec(args)![1]));
      expect(ports).toHaveLength(2);
      expect(ports[1]).not.toBe(ports[0]);
      expect(server.port).toBe(ports[1]);
      expect(await natsReachable(server.url)).toBe(true);
    } finally {
      await server.stop();
    }

    const taken = createServer();
    await new Promise<void>((ok) => taken.listen(server.port, '127.0.0.1', ok));
    try {
      await expect(startNatsServer({ storeDir: join(dir.path, 'store'), port: server.port })).rejects.toThrow(/address already in use/);
    } finally {
      taken.close();
    }
  });

  it('says how to install nats-server when the binary is missing', async () => {
    using dir = tempDir();
    const start = startNatsServer({ storeDir: dir.path, binary: 'nats-server-that-does-not-exist' });
    await expect(start).rejects.toBeInstanceOf(NatsServerMissingError);
    await expect(start).rejects.toThrow(/apt-get install -y nats-server/);
  });
});
