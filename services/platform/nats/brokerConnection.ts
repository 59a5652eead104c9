import { credsAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';

/**
 * What to add to `connect()` options for issued credentials: the `.creds` authenticator and the inbox prefix the
 * user is allowed to subscribe to. Without the prefix every request, JetStream API call and pull would wait on an
 * `_INBOX.…` subscription the broker refuses.
 */
export function brokerConnectOptions(credentials: { creds: string; inboxPrefix: string }): Pick<ConnectionOptions, 'authenticator' | 'inboxPrefix'> {
  const bytes = new TextEncoder().encode(credentials.creds);
  return { authenticator: credsAuthenticator(bytes), inboxPrefix: credentials.inboxPrefix };
}
