import type { NatsConnection } from '@nats-io/transport-node';
import { isErrorCode } from '../../schemas/errorCodes.ts';
import { SecretGrantReply } from '../../schemas/secrets/grant.ts';
import { ephemeralKeyPair } from '../../schemas/ephemeralKey.ts';
import { decryptGrant, signGrantRequest } from '../../schemas/secrets/grantCodec.ts';
import { BmcCredentialsValue } from '../../schemas/secrets/views.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { AgentIdentity } from '../agent/identity.ts';
import { AgentError } from '../agent/errors.ts';
import type { BmcCredentials, CredentialResolver } from './credentials.ts';
import type { SecretHeaderResolver } from './httpProxy.ts';

export interface GrantRequester {
  agentId: string;
  identity: Pick<AgentIdentity, 'privateKey' | 'publicKeyRaw'>;
}

export interface GrantOptions {
  timeoutMs?: number;
  now?: () => number;
}

/**
 * Asks the control plane (`bc.secrets.grant`) for the value of `ref`, for `nodeId`'s BMC: a request signed with the
 * agent's key, carrying a one-time X25519 key the answer is encrypted to. Resolves the decrypted value and when it
 * expires; throws a PlatformError with the refusal's code (GRANT_*, NOT_FOUND, …) or UNAVAILABLE.
 */
export async function requestSecretGrant(
  nc: NatsConnection,
  requester: GrantRequester,
  target: { ref: string; nodeId: string; ticket?: string },
  options: GrantOptions = {},
): Promise<{ value: Buffer; expiresAtMs: number }> {
  const ephemeral = ephemeralKeyPair();
  const issuedAt = new Date((options.now ?? Date.now)()).toISOString();
  const request = {
    agentId: requester.agentId,
    nodeId: target.nodeId,
    ref: target.ref,
    ephemeralPublicKey: ephemeral.publicKeyBase64,
    issuedAt,
    ...(target.ticket ? { ticket: target.ticket } : {}),
  };
  const signed = signGrantRequest(request, requester.identity);
  let body: unknown;
  try {
    body = (await nc.request(Subjects.secretGrant, JSON.stringify(signed), { timeout: options.timeoutMs ?? 5_000 })).json();
  } catch (cause) {
    throw new PlatformError('UNAVAILABLE', `no answer on ${Subjects.secretGrant} for ${target.ref}`, { cause });
  }
  const reply = SecretGrantReply.safeParse(body);
  if (!reply.success) throw new PlatformError('INTERNAL', `the grant for ${target.ref} is not a SecretGrantReply`);
  if (!reply.data.ok) {
    const { code, detail } = reply.data.error;
    throw new PlatformError(isErrorCode(code) ? code : 'INTERNAL', detail);
  }
  const { grant } = reply.data;
  if (grant.ref !== target.ref || grant.nodeId !== target.nodeId)
    throw new PlatformError('INTERNAL', `a grant for ${grant.ref} answered a request for ${target.ref}`);
  try {
    return { value: decryptGrant(grant, ephemeral.privateKey, signed, requester.agentId), expiresAtMs: Date.parse(grant.expiresAt) };
  } catch (cause) {
    throw new PlatformError('INTERNAL', `the grant for ${target.ref} does not decrypt`, { cause });
  }
}

/**
 * A CredentialResolver backed by grants: the first use of a node's credentials asks the control plane, later uses
 * read the in-memory copy until the grant expires (a few seconds early, so a slow BMC call does not outlive it).
 * Nothing is written to disk. Refusals surface as CREDENTIALS_MISSING with the control plane's code in the message.
 */
export function grantedCredentialResolver(
  nc: NatsConnection,
  requester: GrantRequester,
  options: GrantOptions & { expiryMarginMs?: number } = {},
): CredentialResolver {
  const now = options.now ?? Date.now;
  const margin = options.expiryMarginMs ?? 5_000;
  const cache = new Map<string, { credentials: BmcCredentials; expiresAtMs: number }>();
  const pending = new Map<string, Promise<BmcCredentials>>();

  const fetch = async (ref: string, nodeId: string, key: string): Promise<BmcCredentials> => {
    let granted: { value: Buffer; expiresAtMs: number };
    try {
      granted = await requestSecretGrant(nc, requester, { ref, nodeId }, options);
    } catch (cause) {
      const code = cause instanceof PlatformError ? cause.code : 'INTERNAL';
      throw new AgentError('CREDENTIALS_MISSING', `grant of ${ref} for ${nodeId} refused: ${code}`, { cause });
    }
    let credentials: BmcCredentials;
    try {
      credentials = BmcCredentialsValue.parse(JSON.parse(granted.value.toString('utf8')));
    } catch {
      // Not the cause: a parse error could quote the value.
      throw new AgentError('CREDENTIALS_MISSING', `the value granted for ${ref} is not BMC credentials`);
    } finally {
      granted.value.fill(0);
    }
    cache.set(key, { credentials, expiresAtMs: granted.expiresAtMs - margin });
    return credentials;
  };

  return {
    async resolve(ref, context) {
      if (!context?.nodeId) throw new AgentError('CREDENTIALS_MISSING', `a grant of ${ref} is for one node; none was named`);
      const key = `${context.nodeId} ${ref}`;
      const cached = cache.get(key);
      if (cached && cached.expiresAtMs > now()) return cached.credentials;
      cache.delete(key);
      // Commands for one node run in parallel with other nodes': concurrent misses share one request.
      let inFlight = pending.get(key);
      if (!inFlight) {
        inFlight = fetch(ref, context.nodeId, key).finally(() => pending.delete(key));
        pending.set(key, inFlight);
      }
      return inFlight;
    },
  };
}

/**
 * Secret header values for `site.httpProxy`, each granted for the one command whose ticket names it (no caching: a
 * ticket is per command). The value is returned as text and the granted buffer wiped.
 */
export function grantedSecretHeaders(nc: NatsConnection, requester: GrantRequester, options: GrantOptions = {}): SecretHeaderResolver {
  return async (ref, context) => {
    if (!context.ticket) throw new AgentError('CREDENTIALS_MISSING', `${ref} comes with no ticket from the control plane`);
    let granted: { value: Buffer; expiresAtMs: number };
    try {
      granted = await requestSecretGrant(nc, requester, { ref, nodeId: context.nodeId, ticket: context.ticket }, options);
    } catch (cause) {
      const code = cause instanceof PlatformError ? cause.code : 'INTERNAL';
      throw new AgentError('CREDENTIALS_MISSING', `grant of ${ref} for ${context.nodeId} refused: ${code}`, { cause });
    }
    try {
      return granted.value.toString('utf8');
    } finally {
      granted.value.fill(0);
    }
  };
}
