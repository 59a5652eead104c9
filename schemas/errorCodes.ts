/**
 * The closed set of error codes the platform answers with. Every error that crosses a boundary (HTTP, NATS reply,
 * step result) carries one of these; clients match on `code`, never on message text.
 * `status` is the HTTP status the API maps the code to — the only place codes meet HTTP.
 */
export const ErrorCodes = {
  MALFORMED_JSON: { status: 400, title: 'Request body is not valid JSON' },
  VALIDATION_FAILED: { status: 400, title: 'Request does not match the schema' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Content-Type must be application/json' },
  BODY_TOO_LARGE: { status: 413, title: 'Request body is too large' },
  UNKNOWN_COMMAND: { status: 404, title: 'No such command' },
  NOT_FOUND: { status: 404, title: 'No such resource' },
  CONCURRENCY_CONFLICT: { status: 409, title: 'The aggregate kept changing; retries exhausted' },
  ALREADY_EXISTS: { status: 409, title: 'The resource already exists' },
  ILLEGAL_TRANSITION: { status: 409, title: 'The command is not allowed in the current state' },
  PRECONDITION_FAILED: { status: 422, title: 'A referenced resource is missing or unusable' },
  READ_MODEL_BEHIND: { status: 504, title: 'The read model did not reach the requested sequence in time' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  UNAVAILABLE: { status: 503, title: 'A dependency is unavailable' },
  INTERNAL: { status: 500, title: 'Internal error' },
  STEP_TIMEOUT: { status: 504, title: 'A workflow step did not finish within its timeout' },
  AGENT_FAILED: { status: 502, title: 'An agent reported that a command failed' },
  AGENT_RESULT_REJECTED: { status: 502, title: 'An agent result did not verify against a registered key' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ErrorCodes;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ErrorCodes, value);
}
