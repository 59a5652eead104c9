import { credsAuthenticator, type Authenticator, type ConnectionOptions } from '@nats-io/transport-node';
import { identityOfCreds } from './connectionIdentity.ts';

/**
 * What to add to `connect()` options for issued credentials: the `.creds` authenticator and the inbox prefix the
 * user is allowed to subscribe to. Without the prefix every request, JetStream API call and pull would wait on an
 * `_INBOX.…` subscription the broker refuses.
 */
export function brokerConnectOptions(
  credentials: { creds: string; inboxPrefix: string },
  identity = identityOfCreds(credentials.creds),
): Pick<ConnectionOptions, 'authenticator' | 'inboxPrefix'> {
  return { authenticator: nativeCredsAuthenticator(credentials.creds, identity), inboxPrefix: credentials.inboxPrefix };
}

/**
 * Answers the server's nonce with the user key through node's crypto. nats.js' own `credsAuthenticator` derives the
 * key from the seed and signs in JavaScript (tweetnacl) on every connect: three scalar multiplications, a fifth of a
 * simulated site's CPU in the fleet bench, where every machine boot connects twice. The public key is the JWT's
 * subject; a credential whose seed does not match it fails at the server as it would with nats.js' authenticator.
 */
export function nativeCredsAuthenticator(creds: string, identity = identityOfCreds(creds)): Authenticator {
  if (!identity) return credsAuthenticator(new TextEncoder().encode(creds));
  const { jwt, claims } = identity;
  return (nonce?: string) => ({ jwt, nkey: claims.sub, sig: nonce ? identity.sign(Buffer.from(nonce)).toString('base64') : '' });
}
