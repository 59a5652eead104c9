import type { ErrorCode } from '../../schemas/errorCodes.ts';
import type { AgentResultRejection as RejectionReason } from '../../schemas/agent/agentResultCodec.ts';
import { PlatformError } from '../platform/errors.ts';

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
  ) {
    super('AGENT_RESULT_REJECTED', `result for ${commandId} refused: ${reason}`);
  }
}
