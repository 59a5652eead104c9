import { ErrorCodes, type ErrorCode } from '../../schemas/errorCodes.ts';

export interface Issue {
  path: string;
  message: string;
}

/** The one error type that crosses boundaries: a stable code plus a message safe to show (never a secret). */
export class PlatformError extends Error {
  override name = 'PlatformError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { cause?: unknown; issues?: Issue[] } = {},
  ) {
    super(message, { cause: options.cause });
    this.issues = options.issues;
  }
  readonly issues: Issue[] | undefined;

  get status(): number {
    return ErrorCodes[this.code].status;
  }
}

/** A command refused by its decider: the domain said no. Nothing is appended. */
export class DomainError extends PlatformError {
  override name = 'DomainError';
}

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

/** Turns anything thrown into a PlatformError, keeping codes and hiding internals. */
export function asPlatformError(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  return new PlatformError('INTERNAL', 'internal error', { cause: err });
}

/** Converts zod issues into the path/message pairs problem+json carries. */
export function issuesOf(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): Issue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}
