import { connect, createServer, type Socket } from 'node:net';

export interface TcpRelay {
  close(): Promise<void>;
}

/**
 * A plain TCP relay: each connection to `listen` is piped to `target`. The emulated site uses it to put the stack's
 * NATS (on loopback, as `npm start` runs it) on the uplink address its machines route to; NATS's own TLS and auth
 * pass through untouched.
 */
export async function startTcpRelay(options: { listen: { host: string; port: number }; target: { host: string; port: number } }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(options.target.port, options.target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
    // Either side gone: the other goes too, as a direct connection would.
    client.once('error', () => upstream.destroy());
    upstream.once('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listen.port, options.listen.host, () => resolve());
  });
  return {
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
