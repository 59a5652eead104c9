/**
 * The error every layer throws and every surface maps: a stable code from `errorCodes.ts` and a message safe to show.
 * In the contract because agents, plugins and projections throw it as much as the services do.
 */
import { ErrorCodes, type ErrorCode } from './errorCodes.ts';

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

/** Turns anything thrown into a PlatformError, keeping codes and hiding internals. */
export function asPlatformError(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  return new PlatformError('INTERNAL', 'internal error', { cause: err });
}

/** Converts zod issues into the path/message pairs problem+json carries. */
export function issuesOf(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): Issue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}
