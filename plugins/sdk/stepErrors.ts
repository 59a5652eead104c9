import type { ErrorCode } from '../../schemas/errorCodes.ts';
import type { AgentResultRejection as RejectionReason } from '../../schemas/agent/agentResultCodec.ts';
import { PlatformError } from '../../schemas/platformError.ts';

/** The step cannot succeed by trying again: the executor records `StepFailed` (not retryable) and `term()`s the work. */
export class TerminalError extends PlatformError {
  override name = 'TerminalError';
}

/**
 * The step may succeed later: the executor records a retryable `StepFailed` and `nak()`s the work with
 * `retryAfterMs` (default: the step's backoff), until the step's `maxAttempts` are used up.
 */
export class RetryableError extends PlatformError {
  override name = 'RetryableError';
  readonly retryAfterMs: number | undefined;
  constructor(code: ErrorCode, message: string, options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A signed agent result that did not verify. It never counts as the step's outcome; the rejection is recorded. */
export class ResultRejectedError extends PlatformError {
  override name = 'ResultRejectedError';
  constructor(
    readonly commandId: string,
    readonly reason: RejectionReason,
    /** The agent the result says signed it (verified when the reason is NOT_AUTHORISED or MISMATCHED); undefined when unreadable. */
    readonly agentId?: string,
  ) {
    super('AGENT_RESULT_REJECTED', `result for ${commandId}${agentId ? ` from ${agentId}` : ''} refused: ${reason}`);
  }
}

/**
 * The step is waiting for something outside it (a machine still booting, an API not answering yet): not a failure.
 * The executor puts the work back for `retryAfterMs` and runs the same attempt again, until the step's timeout.
 */
export class StepNotReadyError extends Error {
  override name = 'StepNotReadyError';
  constructor(
    readonly reason: string,
    readonly retryAfterMs: number,
  ) {
    super(`not ready: ${reason}`);
  }
}

/** Ends this run of the step as "not ready yet": it runs again (same attempt, same idempotency key) after a pause. */
export function stepNotReady(reason: string, options: { retryAfterMs?: number } = {}): never {
  throw new StepNotReadyError(reason, Math.max(100, options.retryAfterMs ?? 2_000));
}
