import type { NatsConnection } from '@nats-io/transport-node';
import { sign } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandResult, Problem } from '../../schemas/api.ts';
import { isErrorCode } from '../../schemas/errorCodes.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { rotationMessage, type AgentRegistrationRequest } from '../../schemas/trust/commands.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { ANONYMOUS_USER } from '../../schemas/trust/agentIds.ts';
import type { AgentIdentity, AgentRole } from './identity.ts';

/** The registration an agent sends: the public half of the identity, never the private key. */
export type AgentRegistration = AgentRegistrationRequest & { role: AgentRole };

/** Codes that say the registration was not decided (yet): asking again may get an answer. */
export const retryableCodes: ReadonlySet<string> = new Set(['UNAVAILABLE', 'INTERNAL', 'CONCURRENCY_CONFLICT']);

export function registrationOf(identity: AgentIdentity, agent: { agentId: string; role: AgentRole; siteId: string; nodeId?: string }): AgentRegistration {
  return { ...agent, publicKey: identity.publicKeyBase64 };
}

/** What hands `agentId` from its registered key `current` to `next`: the current key's signature (base64). */
export function rotationSignature(agentId: string, current: Pick<AgentIdentity, 'privateKey' | 'keyId'>, next: Pick<AgentIdentity, 'keyId'>): string {
  return sign(null, rotationMessage(agentId, current.keyId, next.keyId), current.privateKey).toString('base64');
}

/**
 * Sends one registration on the agent's own subject (`bc.trust.register.<agentId>.<user>`; `user` is the NATS user
 * key the agent's credentials were issued to, `anonymous` without broker auth). Resolves the result or throws a
 * PlatformError with the control plane's code (`UNAVAILABLE` when nothing answered).
 */
export async function sendRegistration(
  nc: NatsConnection,
  registration: AgentRegistration,
  options: { userPublicKey?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const subject = Subjects.agentRegistration(registration.agentId, options.userPublicKey ?? ANONYMOUS_USER);
  let reply;
  try {
    reply = await nc.request(subject, JSON.stringify(registration), { timeout: options.timeoutMs ?? 10_000 });
  } catch (err) {
    throw new PlatformError('UNAVAILABLE', `no answer on ${subject}`, { cause: err });
  }
  const body = reply.json<{ ok: true; result: CommandResult } | { ok: false; error: Problem }>();
  if (body.ok) return body.result;
  throw new PlatformError(isErrorCode(body.error.code) ? body.error.code : 'INTERNAL', body.error.detail, { issues: body.error.issues });
}

/**
 * Registers the agent's key until the control plane answers, backing off to 5 s. Registering the key that is already
 * registered is a no-op, so a retry or a restart with the same key is harmless. Refusals end the loop with an error:
 * retrying a refused registration cannot help.
 */
export async function registerAgent(nc: NatsConnection, registration: AgentRegistration, log: Logger, signal: AbortSignal): Promise<void> {
  let delayMs = 200;
  for (;;) {
    try {
      await sendRegistration(nc, registration, { timeoutMs: 5_000 });
      log.info({ agentId: registration.agentId, role: registration.role }, 'agent registered');
      return;
    } catch (err) {
      // A PlatformError is the control plane's answer or the lack of one (UNAVAILABLE: the join service is starting).
      const code = err instanceof PlatformError ? err.code : undefined;
      if (code !== undefined && !retryableCodes.has(code)) throw err;
      if (signal.aborted) return;
      log.warn({ agentId: registration.agentId, code }, 'agent registration not answered yet; retrying');
      await sleep(delayMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
      delayMs = Math.min(delayMs * 2, 5_000);
    }
  }
}
