import type { NatsConnection } from '@nats-io/transport-node';

/** Whether a connection is up right now, from its status events (a reconnecting connection is not closed, yet down). */
export interface ConnectionState {
  connected(): boolean;
  /** When the connection last came back (ms), or when watching began: what "no news since" is measured from. */
  upSinceMs(): number;
}

/**
 * Follows `nc`'s status events: down from a `disconnect` (or a stale connection) until the next `reconnect`, and for
 * good once closed. `isClosed()` alone says nothing while the client is reconnecting, which is when it matters.
 */
export function watchConnectionState(nc: NatsConnection, now: () => number = Date.now): ConnectionState {
  let up = !nc.isClosed();
  let upSince = now();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'staleConnection') up = false;
      else if (status.type === 'reconnect') {
        up = true;
        upSince = now();
      }
    }
  })();
  void nc.closed().then(() => (up = false));
  return { connected: () => up && !nc.isClosed(), upSinceMs: () => upSince };
}
