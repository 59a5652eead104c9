import { connect, errors } from '@nats-io/transport-node';

/**
 * What a connection without credentials gets at a NATS server: `anonymous` (it is let in: the server enforces no
 * authentication for it), `refused` (the server demands credentials) or `unreachable`.
 */
export type AnonymousAccess = 'anonymous' | 'refused' | 'unreachable';

/** Connects once without credentials and reports what the server made of it; never retries. */
export async function probeAnonymousAccess(url: string, timeoutMs = 5_000): Promise<AnonymousAccess> {
  try {
    const nc = await connect({ servers: url, timeout: timeoutMs, maxReconnectAttempts: 0, reconnect: false, name: 'bc-auth-probe' });
    await nc.close();
    return 'anonymous';
  } catch (err) {
    return err instanceof errors.AuthorizationError ? 'refused' : 'unreachable';
  }
}
