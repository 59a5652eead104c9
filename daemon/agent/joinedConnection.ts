import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Inboxes } from '../../schemas/subjects.ts';
import type { JoinRole } from '../../schemas/trust/joinTokens.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { natsServers } from '../../services/platform/nats/serverList.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import { createAgentUserKey, credsText } from '../../services/platform/nats/agentCredentials.ts';
import type { AgentIdentity } from './identity.ts';
import { joinControlPlane } from './join.ts';

export interface JoinedAgentOptions {
  natsUrl: string;
  /** Connection name shown by the server. */
  name: string;
  role: JoinRole;
  /** The single-use join token; sent once, never logged or kept. */
  token: string;
  identity: AgentIdentity;
  siteId: string;
  nodeId?: string;
  productUuid?: string;
  /** Broker mode: the public join credential (`join.creds` text). Unset: the server takes anonymous connections. */
  joinCreds?: string;
  /**
   * Broker mode: the NATS user key to join with (default: a fresh one). A long-lived agent passes the one it kept in
   * its state folder (`pendingJoinUserKey`), so a join answered just before a power loss can be sent again.
   */
  userKey?: { publicKey: string; seed: Uint8Array };
  log: Logger;
}

/** An agent that joined: its connection (with its issued credentials in broker mode) and the durable made for it. */
export interface JoinedAgent {
  readonly nc: NatsConnection;
  readonly agentId: string;
  readonly durable: string;
  /** Broker mode: the public nkey of the agent's NATS user (what `revokeUser` takes). */
  readonly userPublicKey?: string;
  /** Broker mode: what the agent connects with from now on; an agent that outlives a reboot keeps it (mode 0600). */
  readonly credentials?: { readonly creds: string; readonly inboxPrefix: string };
}

/**
 * Joins with a token and returns the connection the agent then works on. Broker mode: the join goes over the public
 * join credential, with a user nkey made here (only its public key is sent); the agent then reconnects with its
 * issued JWT, its own seed and its inbox prefix. Without a broker the join connection is kept.
 */
export async function connectJoinedAgent(options: JoinedAgentOptions): Promise<JoinedAgent> {
  const { log } = options;
  const userKey = options.joinCreds ? (options.userKey ?? createAgentUserKey()) : undefined;
  const joinConnection = options.joinCreds
    ? await connect({
        servers: natsServers(options.natsUrl),
        name: `${options.name}-join`,
        ...brokerConnectOptions({ creds: options.joinCreds, inboxPrefix: Inboxes.join }),
        waitOnFirstConnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
      })
    : await connectNats(options.natsUrl, options.name, { waitForServer: true });
  const request = {
    publicKey: options.identity.publicKeyBase64,
    siteId: options.siteId,
    ...(options.nodeId ? { nodeId: options.nodeId } : {}),
    ...(options.productUuid ? { productUuid: options.productUuid } : {}),
    ...(userKey ? { userPublicKey: userKey.publicKey } : {}),
  };
  let accepted;
  try {
    accepted = await joinControlPlane(joinConnection, { role: options.role, token: options.token, request }, log);
  } catch (err) {
    await joinConnection.close();
    throw err;
  }
  const durable = accepted.durable ?? '';
  log.info({ agentId: accepted.agentId, role: options.role, durable, broker: userKey !== undefined }, 'agent joined the control plane');
  if (!userKey) return { nc: joinConnection, agentId: accepted.agentId, durable };
  await joinConnection.close();
  if (!accepted.jwt || !accepted.inboxPrefix) throw new Error('broker mode join answered without credentials');
  const credentials = { creds: credsText(accepted.jwt, userKey.seed), inboxPrefix: accepted.inboxPrefix };
  const nc = await connectNats(options.natsUrl, options.name, { waitForServer: true, credentials });
  return { nc, agentId: accepted.agentId, durable, userPublicKey: userKey.publicKey, credentials };
}
