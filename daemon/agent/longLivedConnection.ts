import type { NatsConnection } from '@nats-io/transport-node';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { userPublicKeyOfCreds } from '../../services/platform/nats/agentCredentials.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { loadOrCreateIdentity } from './identity.ts';
import { connectJoinedAgent } from './joinedConnection.ts';
import { loadMembership, saveMembership } from './membership.ts';
import { clearPendingJoin, pendingJoinUserKey } from './pendingJoin.ts';

export interface LongLivedAgentLaunch {
  role: 'site' | 'node';
  siteId: string;
  nodeId?: string;
  natsUrl: string;
  /** Connection name shown by the server. */
  name: string;
  /** Key, membership and (while a join is in flight) the join's user key live here. */
  stateDir: string;
  /** The single-use join token of the first start; ignored once a membership is kept. */
  token?: string;
  /** Broker mode: the public join credential (`join.creds` text), needed only to join. */
  joinCreds?: string;
  productUuid?: string;
  log: Logger;
}

/** The connection a long-lived agent works on, and its durable and user key when it joined (now or before). */
export interface LongLivedConnection {
  readonly nc: NatsConnection;
  readonly joined?: { readonly durable: string; readonly userPublicKey?: string };
}

/**
 * How `bcd site` and `bcd node` connect: with the membership an earlier start kept (the durable and, in broker mode,
 * the credentials the join issued), else by joining with the token and keeping the membership, else (no token, no
 * membership, no broker) anonymously, registering themselves. A kept membership wins over a token: the token was
 * spent by the join that made it, so a restart with the same environment resumes instead of failing. To join again
 * (new credentials), remove `membership.json` and start with a new token.
 */
export async function connectLongLivedAgent(launch: LongLivedAgentLaunch): Promise<LongLivedConnection> {
  const { role, siteId, nodeId, stateDir, log } = launch;
  const remembered = loadMembership(stateDir);
  if (remembered) {
    if (remembered.siteId !== siteId || remembered.nodeId !== nodeId) {
      const was = [remembered.siteId, remembered.nodeId].filter(Boolean).join('/');
      throw new PlatformError('PRECONDITION_FAILED', `${stateDir} belongs to ${was}, not ${[siteId, nodeId].filter(Boolean).join('/')}`);
    }
    if (launch.token) log.info({ agentId: remembered.agentId }, 'resuming the membership kept in the state folder; the join token is not used');
    const credentials = remembered.credentials;
    const nc = await connectNats(launch.natsUrl, launch.name, { waitForServer: true, ...(credentials ? { credentials } : {}) });
    const userPublicKey = credentials ? await userPublicKeyOfCreds(credentials.creds) : undefined;
    return { nc, joined: { durable: remembered.durable, ...(userPublicKey ? { userPublicKey } : {}) } };
  }
  if (!launch.token) {
    if (launch.joinCreds)
      throw new PlatformError('PRECONDITION_FAILED', `no membership in ${stateDir} and no join token: a first start under broker auth joins with a token`);
    return { nc: await connectNats(launch.natsUrl, launch.name, { waitForServer: true }) };
  }
  const agent = await connectJoinedAgent({
    natsUrl: launch.natsUrl,
    name: launch.name,
    role,
    token: launch.token,
    identity: loadOrCreateIdentity(stateDir),
    siteId,
    ...(nodeId ? { nodeId } : {}),
    ...(launch.productUuid ? { productUuid: launch.productUuid } : {}),
    ...(launch.joinCreds ? { joinCreds: launch.joinCreds, userKey: pendingJoinUserKey(stateDir) } : {}),
    log,
  });
  try {
    saveMembership(stateDir, {
      siteId,
      ...(nodeId ? { nodeId } : {}),
      agentId: agent.agentId,
      durable: agent.durable,
      ...(agent.credentials ? { credentials: { creds: agent.credentials.creds, inboxPrefix: agent.credentials.inboxPrefix } } : {}),
    });
    clearPendingJoin(stateDir);
  } catch (err) {
    await agent.nc.close();
    throw err;
  }
  return { nc: agent.nc, joined: { durable: agent.durable, ...(agent.userPublicKey ? { userPublicKey: agent.userPublicKey } : {}) } };
}
