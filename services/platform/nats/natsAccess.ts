import { connect, errors } from '@nats-io/transport-node';
import { natsServers } from './serverList.ts';

/**
 * What a connection without credentials gets at a NATS server: `anonymous` (it is let in: the server enforces no
 * authentication for it), `refused` (the server demands credentials) or `unreachable`.
 */
export type AnonymousAccess = 'anonymous' | 'refused' | 'unreachable';

/**
 * Connects once without credentials to each server `url` names and reports what they made of it; never retries. A
 * cluster is `anonymous` when any node lets a stranger in (one open node opens the whole account), `refused` when
 * every node that answered refused, `unreachable` when none answered.
 */
export async function probeAnonymousAccess(url: string, timeoutMs = 5_000): Promise<AnonymousAccess> {
  const answers = await Promise.all(natsServers(url).map((server) => probeOne(server, timeoutMs)));
  if (answers.includes('anonymous')) return 'anonymous';
  return answers.includes('refused') ? 'refused' : 'unreachable';
}

async function probeOne(server: string, timeoutMs: number): Promise<AnonymousAccess> {
  try {
    // No failover: each node answers for itself.
    const nc = await connect({
      servers: server,
      timeout: timeoutMs,
      maxReconnectAttempts: 0,
      reconnect: false,
      ignoreClusterUpdates: true,
      noRandomize: true,
      name: 'bc-auth-probe',
    });
    await nc.close();
    return 'anonymous';
  } catch (err) {
    return err instanceof errors.AuthorizationError ? 'refused' : 'unreachable';
  }
}
