import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { isErrorCode } from '../../schemas/errorCodes.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { ANONYMOUS_USER } from '../../schemas/trust/agentIds.ts';
import { AgentKeyStatusReply, type AgentKeyStatus } from '../../schemas/trust/agentKeyStatus.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { rotateKey, rotationPending, type KeyRotationDeps, type RotationOutcome } from './keyRotation.ts';
import type { SigningGate } from './signingGate.ts';

/** How often a long-lived agent asks whether its key is to be rotated (the request waits for the next ask). */
export const DEFAULT_KEY_CHECK_INTERVAL_MS = 10 * 60_000;

/** Asks the control plane, on the agent's own subject, for its registered key and whether a rotation is pending. */
export async function askKeyStatus(nc: NatsConnection, agentId: string, options: { userPublicKey?: string; timeoutMs?: number } = {}): Promise<AgentKeyStatus> {
  const subject = Subjects.agentKeyStatus(agentId, options.userPublicKey ?? ANONYMOUS_USER);
  let body: unknown;
  try {
    body = (await nc.request(subject, '', { timeout: options.timeoutMs ?? 5_000 })).json();
  } catch (err) {
    // Refused by the broker (credentials for another user key than the subject names): asking again changes nothing.
    if (err instanceof Error && err.cause instanceof PermissionViolationError) {
      throw new PlatformError('BROKER_PERMISSION_DENIED', `the broker refuses this credential ${subject}`, { cause: err });
    }
    throw new PlatformError('UNAVAILABLE', `no answer on ${subject}`, { cause: err });
  }
  const reply = AgentKeyStatusReply.safeParse(body);
  if (!reply.success) throw new PlatformError('INTERNAL', 'the key status answer does not match the contract');
  if (!reply.data.ok) throw new PlatformError(isErrorCode(reply.data.error.code) ? reply.data.error.code : 'INTERNAL', 'key status refused');
  return reply.data.status;
}

/** Rotates until the control plane answers (backing off to 5 s) or `signal` ends it (`stopped`). */
async function rotateUntilAnswered(deps: KeyRotationDeps, signal: AbortSignal): Promise<RotationOutcome | 'stopped'> {
  for (let delayMs = 200; !signal.aborted; delayMs = Math.min(delayMs * 2, 5_000)) {
    try {
      return await rotateKey(deps);
    } catch (err) {
      deps.log.warn({ err, agentId: deps.agent.agentId }, 'key rotation not answered yet; retrying');
      await sleep(delayMs, undefined, { signal }).catch(() => undefined);
    }
  }
  return 'stopped';
}

/**
 * Finishes a rotation a crash or an outage interrupted (`identity.key.next` is there), before the agent registers or
 * signs anything: the control plane may hold either key. Holds commands (`gate`) until it is answered.
 */
export function resumePendingRotation(deps: KeyRotationDeps, gate: SigningGate, signal: AbortSignal): Promise<void> {
  if (!rotationPending(deps.stateDir)) return Promise.resolve();
  deps.log.warn({ agentId: deps.agent.agentId }, 'an interrupted key rotation is finished first');
  return gate.exclusive(async () => void (await rotateUntilAnswered(deps, signal)));
}

/**
 * Once `after` resolved (the agent is registered), asks every `intervalMs` whether a rotation of its key is pending
 * (`agent.rotateKey`, e.g. by the autonomy engine's `rotate-key` lane) and carries it out between commands: running
 * ones finish under the old key, new ones wait and are signed with the new one. A request about another key than the
 * one the agent holds is left alone (the control plane settles it when it sees this key).
 */
export function watchKeyRotation(
  deps: KeyRotationDeps,
  options: { gate: SigningGate; intervalMs?: number; after: Promise<unknown>; signal: AbortSignal },
): { readonly done: Promise<void> } {
  const { gate, signal } = options;
  const intervalMs = options.intervalMs ?? DEFAULT_KEY_CHECK_INTERVAL_MS;
  const checkOnce = async () => {
    const status = await askKeyStatus(deps.nc, deps.agent.agentId, deps.userPublicKey ? { userPublicKey: deps.userPublicKey } : {});
    if (!status.rotationRequested || status.keyId !== deps.keyring.keyId) return;
    deps.log.info({ agentId: deps.agent.agentId, keyId: status.keyId }, 'the control plane asks for a new key');
    await gate.exclusive(() => rotateUntilAnswered(deps, signal));
  };
  const done = (async () => {
    if (
      !(await options.after.then(
        () => true,
        () => false,
      ))
    )
      return;
    while (!signal.aborted) {
      await checkOnce().catch((err: unknown) => {
        // A credential that may not ask can never rotate: an error, not a hiccup (the control plane's sensor sees the
        // request go unanswered, `agent-key-rotation-stalled`).
        if (err instanceof PlatformError && err.code === 'BROKER_PERMISSION_DENIED') {
          deps.log.error({ err, agentId: deps.agent.agentId, code: err.code }, 'key rotation cannot run: the broker refuses the key status subject');
        } else deps.log.warn({ err, agentId: deps.agent.agentId }, 'key status not answered; asking again later');
      });
      await sleep(intervalMs, undefined, { signal }).catch(() => undefined);
    }
  })();
  return { done };
}
