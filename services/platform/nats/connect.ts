import { connect, type NatsConnection } from '@nats-io/transport-node';

/**
 * Connects with endless reconnects: a control-plane process outlives server restarts and keeps its durable
 * consumers; only the first connection attempt fails fast.
 */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({
    servers: url,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: 2_000,
    pingInterval: 10_000,
    // Every request otherwise captures an async stack trace up front: measurable CPU on the command and step paths.
    noAsyncTraces: true,
  });
}

/** True when something answers at `url` as a NATS server. */
export async function natsReachable(url: string): Promise<boolean> {
  try {
    const nc = await connect({ servers: url, timeout: 1_000, maxReconnectAttempts: 0, reconnect: false });
    await nc.close();
    return true;
  } catch {
    return false;
  }
}
