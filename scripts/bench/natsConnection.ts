import { connect, type NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../services/platform/nats/connect.ts';

/**
 * The product's `connectNats`, unless the bench is asked (`BENCH_NO_ASYNC_TRACES=1`) to try the same options plus
 * `noAsyncTraces: true`: nats.js then stops building two Error objects (with stack traces) per request.
 */
export async function benchConnection(url: string, name: string): Promise<NatsConnection> {
  if (process.env.BENCH_NO_ASYNC_TRACES !== '1') return connectNats(url, name);
  return connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 2_000, pingInterval: 10_000, noAsyncTraces: true });
}
