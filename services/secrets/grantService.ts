import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { SecretGrantRequest, SignedSecretGrantRequest, GRANT_REQUEST_MAX_AGE_MS, type SecretGrantReply } from '../../schemas/secrets/grant.ts';
import { encryptGrant, grantRequestSignedBy } from '../../schemas/secrets/grantCodec.ts';
import { sealingAad, secretIdOf } from '../../schemas/secrets/sealed.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { nodeRef } from '../../schemas/metal/nodeState.ts';
import { agentRef } from '../../schemas/trust/agentState.ts';
import { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import { serveRequests } from '../platform/commands/requestResponder.ts';
import { PlatformError, issuesOf } from '../../schemas/platformError.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { Logger } from '../platform/logger.ts';
import { authoriseGrant, authoriseTicketGrant } from './grantPolicy.ts';
import { verifySecretTicket } from './secretTicket.ts';
import type { MasterKey } from './masterKey.ts';
import { open } from './sealing.ts';
import { secretAggregate } from './secret/secret.ts';

export interface GrantServiceOptions {
  /** How long a granted value may be used before the agent must ask again. Default 120 s. */
  ttlMs?: number;
  /** Requests issued longer ago than this (or this far in the future) are GRANT_STALE. Default 60 s. */
  maxAgeMs?: number;
  now?: () => number;
  /**
   * The broker's auth (`BC_NATS_AUTH`). Under `none` every request is refused (`BROKER_AUTH_REQUIRED`): anyone may
   * register the first key of an agent nobody registered yet, so a valid signature proves no identity. Default `operator`.
   */
  natsAuth?: 'operator' | 'none';
}

function parseRequest(msg: Msg): { signed: SignedSecretGrantRequest; request: SecretGrantRequest; requestBytes: Buffer } {
  let body: unknown;
  let inner: unknown;
  try {
    body = msg.json();
  } catch (cause) {
    throw new PlatformError('MALFORMED_JSON', 'grant request is not valid JSON', { cause });
  }
  const signed = SignedSecretGrantRequest.safeParse(body);
  if (!signed.success) throw new PlatformError('VALIDATION_FAILED', 'invalid signed grant request', { issues: issuesOf(signed.error) });
  const requestBytes = Buffer.from(signed.data.request, 'base64');
  try {
    inner = JSON.parse(requestBytes.toString('utf8'));
  } catch (cause) {
    throw new PlatformError('MALFORMED_JSON', 'signed grant request does not hold JSON', { cause });
  }
  const request = SecretGrantRequest.safeParse(inner);
  if (!request.success) throw new PlatformError('VALIDATION_FAILED', 'invalid grant request', { issues: issuesOf(request.error) });
  return { signed: signed.data, request: request.data, requestBytes };
}

/**
 * `secret-grants`: answers `bc.secrets.grant` (queue group `secret-grants`, so replicas share the load). A request
 * counts only when signed by the registered key of the agent it names (GRANT_UNKNOWN_AGENT, GRANT_FORGED), fresh
 * (GRANT_STALE) and for a secret that agent may use (GRANT_NOT_AUTHORISED, see `authoriseGrant`). The answer is the
 * value encrypted to the request's one-time X25519 key: nothing on the wire is readable by anyone else, and a replayed
 * request earns a grant only its original sender can open.
 */
export function startGrantService(nc: NatsConnection, store: EventStore, masterKey: MasterKey, log: Logger, options: GrantServiceOptions = {}) {
  const repository = new AggregateRepository(store);
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? 120_000;
  const maxAgeMs = options.maxAgeMs ?? GRANT_REQUEST_MAX_AGE_MS;

  const grant = async (msg: Msg): Promise<SecretGrantReply> => {
    if (options.natsAuth === 'none') {
      throw new PlatformError('BROKER_AUTH_REQUIRED', 'secret grants are not served while broker auth is off (BC_NATS_AUTH=none)');
    }
    const { signed, request, requestBytes } = parseRequest(msg);
    // A few requests per deploy: every read is the stream leader's, so no replica behind the log refuses a due grant.
    const agent = (await repository.load(agentRef, request.agentId, 'leader')).state;
    if (!agent.exists) throw new PlatformError('GRANT_UNKNOWN_AGENT', `agent ${request.agentId} is not registered`);
    if (!grantRequestSignedBy(signed, agent.publicKey))
      throw new PlatformError('GRANT_FORGED', `request is not signed by the registered key of ${request.agentId}`);
    const ageMs = now() - Date.parse(request.issuedAt);
    if (Math.abs(ageMs) > maxAgeMs)
      throw new PlatformError('GRANT_STALE', `request issued ${Math.round(ageMs / 1000)} s ago; at most ${maxAgeMs / 1000} s either way`);
    const secretId = secretIdOf(request.ref)!;
    const [node, secret] = await Promise.all([repository.load(nodeRef, request.nodeId, 'leader'), repository.load(secretAggregate, secretId, 'leader')]);
    const allowed = request.ticket
      ? authoriseTicketGrant(request, verifySecretTicket(masterKey, request.ticket), now(), agent, node.state, secret.state)
      : authoriseGrant(request, agent, node.state, secret.state);
    const plaintext = open(allowed.sealed, masterKey, sealingAad(secretId, allowed.version));
    const expiresAt = new Date(now() + ttlMs).toISOString();
    log.info({ agentId: request.agentId, nodeId: request.nodeId, ref: request.ref, version: allowed.version, expiresAt }, 'secret granted');
    return { ok: true, grant: encryptGrant(plaintext, request, requestBytes, expiresAt) };
  };

  const sub = serveRequests(nc, { subject: Subjects.secretGrant, queue: 'secret-grants', what: 'secret grant', logRefusals: true, handle: grant }, log);
  log.info({ subject: Subjects.secretGrant, keyId: masterKey.keyId }, 'secret grants served');
  return { stop: async () => sub.unsubscribe() };
}
