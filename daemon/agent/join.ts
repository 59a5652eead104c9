import type { NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { isErrorCode } from '../../schemas/errorCodes.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { JoinReply, type JoinAccepted, type JoinRequest } from '../../schemas/trust/join.ts';
import type { JoinRole } from '../../schemas/trust/joinTokens.ts';
import { PlatformError } from '../../services/platform/errors.ts';
import type { Logger } from '../../services/platform/logger.ts';

export interface JoinAttempt {
  role: JoinRole;
  /** The join token: sent once on `bc.join.<role>`, never logged. */
  token: string;
  request: Omit<JoinRequest, 'token'>;
}

/**
 * Sends the join request until the control plane answers (no responder yet or a timeout is retried, backing off to
 * 5 s). A refusal (JOIN_* codes, VALIDATION_FAILED) ends it with a PlatformError carrying the code: a single-use
 * token that was refused will not be accepted later either.
 */
export async function joinControlPlane(nc: NatsConnection, attempt: JoinAttempt, log: Logger, signal?: AbortSignal): Promise<JoinAccepted> {
  const body = JSON.stringify({ ...attempt.request, token: attempt.token });
  for (let delayMs = 200; ; delayMs = Math.min(delayMs * 2, 5_000)) {
    let reply: unknown;
    try {
      reply = (await nc.request(Subjects.join(attempt.role), body, { timeout: 10_000 })).json();
    } catch (err) {
      if (signal?.aborted) throw new PlatformError('UNAVAILABLE', 'join aborted', { cause: err });
      log.warn({ role: attempt.role }, 'join not answered yet; retrying');
      await sleep(delayMs);
      continue;
    }
    const parsed = JoinReply.safeParse(reply);
    if (!parsed.success) throw new PlatformError('INTERNAL', 'the join answer does not match the contract');
    if (parsed.data.ok) return parsed.data;
    const code = isErrorCode(parsed.data.error.code) ? parsed.data.error.code : 'INTERNAL';
    if (code === 'UNAVAILABLE' || code === 'CONCURRENCY_CONFLICT') {
      await sleep(delayMs);
      continue;
    }
    throw new PlatformError(code, `join refused: ${code}`);
  }
}
