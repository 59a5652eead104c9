import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** Below this sit the well-known and commonly configured service ports. */
const LOWEST = 10_000;
/** Above this sit the simulated site's BMC ports (`BC_SIM_BMC_PORT_BASE`, 18620 and up, a port per machine). */
const HIGHEST = 18_000;

/**
 * `count` distinct TCP ports on `host` that were free a moment ago, in 10000-18000 and below the kernel's ephemeral
 * range.
 *
 * A port a server must come back to after a crash cannot come from the ephemeral range: while the server is down, its
 * clients and route peers keep dialling it from ephemeral source ports, and a dial to a closed loopback port in the
 * range can be given that very port as its source (a TCP self-connect), or any outgoing connection can take it,
 * and the restart then fails with "address already in use". Every port is held until all are chosen, so they differ.
 */
export async function pickListenPorts(host: string, count: number): Promise<number[]> {
  const high = Math.min(HIGHEST, ephemeralLow() - 1);
  const held: Server[] = [];
  try {
    for (let tries = 0; held.length < count; tries++) {
      if (tries > 100 * count) throw new Error(`no free TCP port on ${host} in ${LOWEST}-${high}`);
      const server = await listenOn(host, LOWEST + Math.floor(Math.random() * (high - LOWEST + 1)));
      if (server) held.push(server);
    }
    return held.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(held.map((s) => new Promise((done) => s.close(done))));
  }
}

/** Where the kernel's ephemeral range starts; a range that leaves no room below it is not worked around. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : HIGHEST + 1;
  } catch {
    return HIGHEST + 1;
  }
}

/** A listener on `port`, or undefined when that port is taken; other errors (e.g. `host` is not ours) are thrown. */
function listenOn(host: string, port: number): Promise<Server | undefined> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? done(undefined) : fail(err)));
    server.listen({ port, host, exclusive: true }, () => done(server));
  });
}
