import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { embeddedNatsPids } from '../support/embeddedNats.ts';
import { freePort } from '../support/freePort.ts';
import { tempDir } from '../support/natsServer.ts';
import { startStackProcess } from '../support/stackProcess.ts';

describe('npm start with the embedded nats-server', () => {
  it('restarts the server after kill -9, and /readyz says nats is down until it is back', { timeout: 180_000 }, async () => {
    using dir = tempDir();
    await using stack = await startStackProcess({ BC_DATA_DIR: dir.path, BC_SIM_MACHINES: '0' }, await freePort());
    const [pid] = embeddedNatsPids(dir.path);
    expect(pid).toBeDefined();

    process.kill(pid!, 'SIGKILL');
    const seen: { status: number; nats: boolean }[] = [];
    const readyz = async () => {
      const res = await fetch(`${stack.api}/readyz`);
      const body = (await res.json()) as { nats: boolean };
      seen.push({ status: res.status, nats: body.nats });
      return res.status;
    };
    // Down first: the API's connection is reconnecting, which is not "connected".
    for (let i = 0; i < 200 && !seen.some((s) => !s.nats); i++) {
      await readyz();
      await sleep(25);
    }
    expect(seen.find((s) => !s.nats)).toEqual({ status: 503, nats: false });

    // Then back: a new server process on the same store, and the API ready again.
    await expect.poll(readyz, { timeout: 60_000, interval: 200 }).toBe(200);
    expect(seen.at(-1)).toEqual({ status: 200, nats: true });
    const after = embeddedNatsPids(dir.path);
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(pid);
    expect(stack.child.exitCode).toBeNull();
  });
});
