import type { NatsConnection } from '@nats-io/transport-node';
import { SystemApi } from '../../../schemas/subjects.ts';
import type { AccountIdentity, BrokerMaterial } from './brokerMaterial.ts';
import { BrokerTrustError } from './errors.ts';

/** The server's answer on `$SYS.REQ.CLAIMS.UPDATE` (one per server; a request sees the first). */
interface ClaimsUpdateReply {
  data?: { account?: string; code?: number; message?: string };
  error?: { account?: string; code?: number; description?: string };
}

/**
 * Pushes an account JWT to the servers of a full resolver over a system-account connection. The servers apply it
 * at once: revoked users are disconnected and refused from then on. Throws `CLAIMS_UPDATE_FAILED` when the server
 * refuses it or nobody answers (a server without a full resolver, or a connection outside `SYS`).
 */
export async function pushAccountJwt(systemConnection: NatsConnection, account: AccountIdentity, options: { timeoutMs?: number } = {}): Promise<void> {
  let reply: ClaimsUpdateReply;
  try {
    const msg = await systemConnection.request(SystemApi.claimsUpdate, account.jwt, { timeout: options.timeoutMs ?? 5_000 });
    reply = msg.json<ClaimsUpdateReply>();
  } catch (err) {
    throw new BrokerTrustError('CLAIMS_UPDATE_FAILED', `no server answered the claims update for account ${account.name}`, { cause: err });
  }
  if (reply.error || (reply.data?.code !== undefined && reply.data.code >= 300)) {
    const why = reply.error?.description ?? reply.data?.message ?? 'refused';
    throw new BrokerTrustError('CLAIMS_UPDATE_FAILED', `claims update for account ${account.name} refused: ${why}`);
  }
}

/**
 * Revokes a user key: every JWT for it issued up to now stops working. The application account is re-signed with
 * the key in `revocations` (stored under the broker directory, so a restart keeps it) and pushed to the servers.
 * Issue no new JWT for a revoked key: revocation is by issue time, so a later JWT would be accepted again.
 */
export async function revokeUser(
  material: BrokerMaterial,
  systemConnection: NatsConnection,
  userPublicKey: string,
  options: { timeoutMs?: number } = {},
): Promise<AccountIdentity> {
  if (!/^U[A-Z2-7]{55}$/.test(userPublicKey)) throw new BrokerTrustError('INVALID_PUBLIC_KEY', 'not a user nkey (U…)');
  const now = Math.floor(Date.now() / 1000);
  const account = await material.reissueAppAccount((claims) => ({ ...claims, revocations: { ...claims.revocations, [userPublicKey]: now } }));
  await pushAccountJwt(systemConnection, account, options);
  return account;
}
