import type { NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { isErrorCode } from '../../schemas/errorCodes.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { JoinAccepted, JoinReply, type JoinRequest } from '../../schemas/trust/join.ts';
import { openJoinAnswer } from '../../schemas/trust/joinReplySeal.ts';
import { ephemeralKeyPair } from '../../schemas/ephemeralKey.ts';
import type { JoinRole } from '../../schemas/trust/joinTokens.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Logger } from '../../services/platform/logger.ts';

export interface JoinAttempt {
  role: JoinRole;
  /** The join token: sent once on `bc.join.<role>`, never logged. */
  token: string;
  request: Omit<JoinRequest, 'token' | 'replyKey'>;
}

/**
 * Sends the join request until the control plane answers (no responder yet or a timeout is retried, backing off to
 * 5 s). A refusal (JOIN_* codes, VALIDATION_FAILED) ends it with a PlatformError carrying the code: a single-use
 * token that was refused will not be accepted later either.
 */
export async function joinControlPlane(nc: NatsConnection, attempt: JoinAttempt, log: Logger, signal?: AbortSignal): Promise<JoinAccepted> {
  // The answer is sealed to a key of this request alone and comes to an inbox of this request alone.
  const reply = ephemeralKeyPair();
  const body = JSON.stringify({ ...attempt.request, token: attempt.token, replyKey: reply.publicKeyBase64 });
  for (let delayMs = 200; ; delayMs = Math.min(delayMs * 2, 5_000)) {
    let answer: unknown;
    try {
      answer = (await nc.request(Subjects.join(attempt.role), body, { timeout: 10_000, noMux: true })).json();
    } catch (err) {
      if (signal?.aborted) throw new PlatformError('UNAVAILABLE', 'join aborted', { cause: err });
      log.warn({ role: attempt.role }, 'join not answered yet; retrying');
      await sleep(delayMs);
      continue;
    }
    const parsed = JoinReply.safeParse(answer);
    if (!parsed.success) throw new PlatformError('INTERNAL', 'the join answer does not match the contract');
    if (parsed.data.ok) {
      if (!('sealed' in parsed.data)) throw new PlatformError('INTERNAL', 'the join answer is not sealed to this request');
      const opened = JoinAccepted.safeParse(openJoinAnswerOrUndefined(parsed.data.sealed, reply.privateKey, attempt.request.publicKey));
      if (!opened.success) throw new PlatformError('INTERNAL', 'the sealed join answer does not open or match the contract');
      return opened.data;
    }
    const code = isErrorCode(parsed.data.error.code) ? parsed.data.error.code : 'INTERNAL';
    if (code === 'UNAVAILABLE' || code === 'CONCURRENCY_CONFLICT') {
      await sleep(delayMs);
      continue;
    }
    throw new PlatformError(code, `join refused: ${code}`);
  }
}

function openJoinAnswerOrUndefined(...args: Parameters<typeof openJoinAnswer>): unknown {
  try {
    return openJoinAnswer(...args);
  } catch {
    return undefined;
  }
}
