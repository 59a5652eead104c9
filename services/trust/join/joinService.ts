import { jetstreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { createHash } from 'node:crypto';
import { Subjects } from '../../../schemas/subjects.ts';
import { keyIdOf, ramdiskAgentId, siteAgentId } from '../../../schemas/trust/agentIds.ts';
import { JoinRequest, type JoinAccepted } from '../../../schemas/trust/join.ts';
import { sealJoinAnswer, type SealedJoinAnswer } from '../../../schemas/trust/joinReplySeal.ts';
import { hashJoinSecret, JoinRefusal, JoinRole, parseJoinToken } from '../../../schemas/trust/joinTokens.ts';
import { CommandBus } from '../../platform/commands/commandBus.ts';
import { serveRequests } from '../../platform/commands/requestResponder.ts';
import { issuesOf, PlatformError } from '../../../schemas/platformError.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RefusalTallyOptions } from '../../platform/refusalTally.ts';
import { registerAgent, registrationOutcome } from '../agent/register.ts';
import type { BrokerMaterial } from '../broker/brokerMaterial.ts';
import type { RoleGrant } from '../broker/permissions.ts';
import { issueUserJwt } from '../broker/userCredentials.ts';
import { useJoinToken } from '../joinToken/use.ts';
import { countRefusals } from '../refusals/countRefusals.ts';
import { startRefusalCounting } from '../refusals/refusalCounting.ts';
import { ensureAgentDurable } from './agentDurable.ts';

export interface JoinServiceOptions {
  /** Broker mode: sign each agent's user JWT. Unset: agents connect anonymously. */
  broker?: { material: BrokerMaterial; jwtTtlSeconds?: number };
  /** Ack wait of the durables made for joining agents (default `AGENT_ACK_WAIT_MS`). */
  ackWaitMs?: number;
  /** The process's command bus (it must carry `pki.useJoinToken`, `agent.register` and `trust.countRefusals`). */
  bus?: CommandBus;
  /** How refused joins are counted rather than recorded one by one (default: 60 s windows, 20 records each). */
  refusals?: RefusalTallyOptions;
}

export interface JoinService {
  stop(): Promise<void>;
}

type AgentGrant = Extract<RoleGrant, { role: 'site' | 'node' }>;

/**
 * The request, or why it cannot be one, and whom a refusal of it is counted against: the place it claims to join
 * (role, site and node as it names them; untrusted and only ever counted), or `unreadable`.
 */
function readRequest(msg: Msg): { request: JoinRequest; source: string } | { error: PlatformError; source: string } {
  const role = (msg.subject.split('.')[2] ?? '').slice(0, 20);
  let body: unknown;
  try {
    body = msg.json();
  } catch (cause) {
    return { error: new PlatformError('MALFORMED_JSON', 'join request is not valid JSON', { cause }), source: `${role}:unreadable` };
  }
  const parsed = JoinRequest.safeParse(body);
  // The issues name paths and rules only; zod does not quote the rejected input, so the token cannot leak here.
  if (!parsed.success) {
    return { error: new PlatformError('VALIDATION_FAILED', 'invalid join request', { issues: issuesOf(parsed.error) }), source: `${role}:unreadable` };
  }
  const { siteId, nodeId } = parsed.data;
  return { request: parsed.data, source: `${role}:${siteId}${nodeId ? `/${nodeId}` : ''}` };
}

function agentIdOf(role: JoinRole, request: JoinRequest): string {
  if (role === 'site') return siteAgentId(request.siteId);
  if (!request.nodeId) throw new PlatformError('VALIDATION_FAILED', `a ${role} join names its nodeId`);
  return role === 'ramdisk' ? ramdiskAgentId(request.nodeId, keyIdOf(request.publicKey)) : `node-${request.nodeId}`;
}

/**
 * `join`: answers `bc.join.<role>` (queue group `join`). A joiner presents a single-use token; the service spends it
 * (`pki.useJoinToken`: the append's expected sequence makes a second use impossible, and a refusal is audited as
 * `JoinRefused` with its code, or counted in `RefusalsCounted` beyond the first per claimed place and window),
 * creates the agent's durable (agents only look it up), registers the agent's key (`agent.register`, so results
 * verify and `wait.agentJoined` sees it) and in broker mode signs its user JWT. The token is hashed on arrival and
 * never logged, appended or answered.
 */
/**
 * How long an agent's NATS credentials live. Site and node agents are long-lived daemons: they are cut off by
 * revocation (`revokeUser`), not by an expiry that would silently take a site down; a ramdisk lives for one
 * provisioning job, so a day is plenty.
 */
const agentJwtTtlSeconds: Record<'site' | 'ramdisk' | 'node', number> = { site: 365 * 86_400, node: 365 * 86_400, ramdisk: 86_400 };

export function startJoinService(nc: NatsConnection, store: EventStore, log: Logger, options: JoinServiceOptions = {}): JoinService {
  // A process's own bus when it has one (commands on one aggregate serialised process-wide), else one of its own.
  const bus = options.bus ?? new CommandBus(store, [useJoinToken, registerAgent, countRefusals], { retries: 5 });
  const jsm = jetstreamManager(nc);
  // The join credential is public: a refused join is recorded for the first attempt of each claimed place in a window
  // and counted otherwise, so nobody grows the log (or the log file) with the rate of their attempts.
  const refusals = startRefusalCounting(bus, 'join', log, options.refusals);

  const join = async (msg: Msg): Promise<JoinAccepted | { ok: true; sealed: SealedJoinAnswer }> => {
    const read = readRequest(msg);
    const ticket = refusals.admit(read.source);
    try {
      if ('error' in read) throw read.error;
      const accepted = await admit(msg, read.request, ticket.record);
      ticket.passed();
      // Every joiner holds the same public join credential and may read the join inboxes: seal the answer to its key.
      return read.request.replyKey ? { ok: true, sealed: sealJoinAnswer(accepted, read.request.replyKey, read.request.publicKey) } : accepted;
    } catch (err) {
      throw refusals.failed(ticket, err);
    }
  };

  const admit = async (msg: Msg, request: JoinRequest, recordRefusal: boolean): Promise<JoinAccepted> => {
    const role = JoinRole.safeParse(msg.subject.split('.')[2]);
    if (!role.success) throw new PlatformError('VALIDATION_FAILED', `no join role ${msg.subject}`);
    if (options.broker && !request.userPublicKey) throw new PlatformError('VALIDATION_FAILED', 'broker mode: a join names the userPublicKey of the agent');
    const agentId = agentIdOf(role.data, request);
    const presented = parseJoinToken(request.token);
    const keyId = keyIdOf(request.publicKey);
    // One command id per (token, keys): the same agent retrying a lost answer is answered again, anyone else is not.
    const attempt = createHash('sha256')
      .update(`${presented?.tokenId}|${request.publicKey}|${request.userPublicKey ?? ''}|${role.data}`)
      .digest('base64url');
    // Refused: JoinRefused was appended, or (not recordRefusal) the decider threw the refusal's code.
    const use = await bus.execute({
      name: useJoinToken.name,
      commandId: `join-${attempt.slice(0, 40)}`,
      actor: `join:${agentId}`,
      payload: {
        ...(presented ? { tokenId: presented.tokenId, presentedHash: hashJoinSecret(presented.secret) } : {}),
        role: role.data,
        siteId: request.siteId,
        ...(request.nodeId ? { nodeId: request.nodeId } : {}),
        agentId,
        keyId,
        ...(request.productUuid ? { productUuid: request.productUuid } : {}),
        recordRefusal,
      },
    });
    const refused = JoinRefusal.safeParse((use.events.find((e) => e.type === 'JoinRefused')?.data as { reason?: string } | undefined)?.reason);
    if (refused.success) throw new PlatformError(refused.data, `join refused: ${refused.data}`);
    if (!use.events.some((e) => e.type === 'JoinTokenUsed')) throw new PlatformError('INTERNAL', 'join refused: INTERNAL');
    const grant: AgentGrant =
      role.data === 'site' ? { role: 'site', agentId, siteId: request.siteId } : { role: 'node', agentId, siteId: request.siteId, nodeId: request.nodeId! };
    // The durable exists before the key is registered: registration lets the workflow send the next command, which a
    // ramdisk's deliver-new durable would miss if it were made afterwards.
    const durable = await ensureAgentDurable(await jsm, grant, options.ackWaitMs);
    // The spent token is the authority: it registers this key whatever key the agent had, once per token. The
    // command id names the token (never the key), so a re-join with a fresh token is never answered by an old registration.
    const tokenId = presented!.tokenId;
    registrationOutcome(
      await bus.execute({
        name: registerAgent.name,
        commandId: `join-register-${tokenId}`,
        actor: `join:${agentId}:${tokenId}`,
        payload: {
          agentId,
          role: role.data,
          siteId: request.siteId,
          ...(request.nodeId ? { nodeId: request.nodeId } : {}),
          publicKey: request.publicKey,
          joinTokenId: tokenId,
        },
      }),
    );
    log.info({ agentId, role: role.data, tokenId: presented?.tokenId, keyId, durable }, 'agent joined');
    if (!options.broker) return { ok: true, agentId, durable };
    const ttl = options.broker.jwtTtlSeconds ?? agentJwtTtlSeconds[role.data];
    const issued = await issueUserJwt(options.broker.material, request.userPublicKey!, grant, { name: agentId, ttlSeconds: ttl });
    return { ok: true, agentId, jwt: issued.jwt, expiresAt: issued.expiresAt, inboxPrefix: issued.inboxPrefix, durable };
  };

  const sub = serveRequests(nc, { subject: Subjects.allJoins, queue: 'join', what: 'join', logRefusals: refusals.logs, handle: join }, log);
  log.info({ subject: Subjects.allJoins, broker: options.broker !== undefined }, 'join requests served');
  return {
    stop: async () => {
      sub.unsubscribe();
      await refusals.stop();
    },
  };
}
