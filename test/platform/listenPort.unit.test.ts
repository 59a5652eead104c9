import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { pickListenPorts } from '../../services/platform/listenPort.ts';

const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

const listen = (port: number) =>
  new Promise<ReturnType<typeof createServer>>((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => ok(server));
  });

describe('pickListenPorts', () => {
  it('picks distinct ports below the kernel ephemeral range and the simulated BMC ports that are free to listen on', async () => {
    const ports = await pickListenPorts('127.0.0.1', 12);
    expect(new Set(ports).size).toBe(12);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(Math.min(ephemeralLow, 18_620));
    }
    const servers = await Promise.all(ports.map(listen));
    await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  });

  it('throws what the kernel said for a host that is not ours instead of trying every port', async () => {
    await expect(pickListenPorts('192.0.2.1', 1)).rejects.toThrow(/EADDRNOTAVAIL/);
  });
});
