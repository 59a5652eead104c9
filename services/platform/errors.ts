import { PlatformError } from '../../schemas/platformError.ts';

/** The aggregate's subject moved past the expected sequence (JetStream API error 10071). */
export class ConcurrencyError extends PlatformError {
  override name = 'ConcurrencyError';
  constructor(
    readonly subject: string,
    readonly expectedSeq: number,
    options: { cause?: unknown } = {},
  ) {
    super('CONCURRENCY_CONFLICT', `${subject} moved past sequence ${expectedSeq}`, options);
  }
}

/** Awaits an operation on NATS: timeouts, missing responders and closed connections become UNAVAILABLE (retryable). */
export async function unavailableOnFailure<T>(operation: Promise<T>, message: string): Promise<T> {
  try {
    return await operation;
  } catch (err) {
    throw new PlatformError('UNAVAILABLE', message, { cause: err });
  }
}
