import type { NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendCommand } from '../../services/commands/commandClient.ts';
import { PlatformError } from '../../services/platform/errors.ts';
import type { Logger } from '../../services/platform/logger.ts';
import type { AgentIdentity, AgentRole } from './identity.ts';

/** The `agent.register` payload: the public half of the identity, never the private key. */
export interface AgentRegistration {
  agentId: string;
  role: AgentRole;
  siteId: string;
  nodeId?: string;
  publicKey: string;
}

const retryableCodes = new Set<string>(['UNAVAILABLE', 'INTERNAL', 'UNKNOWN_COMMAND', 'CONCURRENCY_CONFLICT']);

export function registrationOf(identity: AgentIdentity, agent: { agentId: string; role: AgentRole; siteId: string; nodeId?: string }): AgentRegistration {
  return { ...agent, publicKey: identity.publicKeyBase64 };
}

/**
 * Sends `agent.register` until the control plane answers, backing off to 5 s. The command id is derived from the
 * key, so a retry (or a restart with the same key) is deduplicated while a new key registers anew. Rejections by
 * the control plane end the loop with an error: retrying a refused registration cannot help.
 */
export async function registerAgent(
  nc: NatsConnection,
  registration: AgentRegistration,
  keyId: string,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  let delayMs = 200;
  for (;;) {
    try {
      await sendCommand(nc, 'agent.register', registration, { commandId: `agent-register-${keyId}`, timeoutMs: 5_000 });
      log.info({ agentId: registration.agentId, role: registration.role }, 'agent registered');
      return;
    } catch (err) {
      // A PlatformError is the control plane's answer; transport failures (no responders, timeout) are not. An
      // UNKNOWN_COMMAND is a control plane older than this agent: it may be upgraded under us, so keep asking.
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
