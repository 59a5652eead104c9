import { connect, type NatsConnection } from '@nats-io/transport-node';
import { brokerConnectOptions } from './brokerConnection.ts';
import { natsServers } from './serverList.ts';
import { answerRequestsWithoutCancelError } from './answeredRequests.ts';
import { coalesceSocketWrites } from './coalescedWrites.ts';
import { identifyConnection, identityOfCreds } from './connectionIdentity.ts';

/**
 * Issued broker credentials (`services/trust/broker/`): the `.creds` text (JWT + seed: never log it) and the inbox
 * prefix the user may subscribe to (`_INBOX` for control-plane services, `_INBOX_<agentId>` for an agent).
 */
export interface NatsCredentials {
  creds: string;
  inboxPrefix: string;
}

/**
 * Connects with endless reconnects: a control-plane process outlives server restarts and keeps its durable
 * consumers. The first attempt fails fast unless `waitForServer` is set, which agents use: a machine's ramdisk
 * that boots while the network or the server is slow keeps dialling rather than dying.
 */
export async function connectNats(
  url: string,
  name: string,
  options: { waitForServer?: boolean; credentials?: NatsCredentials } = {},
): Promise<NatsConnection> {
  const credentials = options.credentials;
  const identity = credentials && identityOfCreds(credentials.creds);
  answerRequestsWithoutCancelError();
  coalesceSocketWrites();
  const nc = await connect({
    // A cluster's nodes, comma-separated: the client fails over between them (and learns the others from the server).
    servers: natsServers(url),
    name,
    ...(credentials ? brokerConnectOptions(credentials, identity) : {}),
    waitOnFirstConnect: options.waitForServer === true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: 2_000,
    pingInterval: 10_000,
    // Every request otherwise captures an async stack trace up front: measurable CPU on the command and step paths.
    noAsyncTraces: true,
  });
  // What the connection authenticated as, so commands sent on it can be signed as this process (`commandSender.ts`).
  if (identity) identifyConnection(nc, identity);
  return nc;
}

/** True when something answers at `url` (any of its servers) as a NATS server. */
export async function natsReachable(url: string): Promise<boolean> {
  try {
    const nc = await connect({ servers: natsServers(url), timeout: 1_000, maxReconnectAttempts: 0, reconnect: false });
    await nc.close();
    return true;
  } catch {
    return false;
  }
}
