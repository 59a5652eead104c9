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
  UNAUTHENTICATED: { status: 401, title: 'A valid bearer token is required (Authorization: Bearer <token>)' },
  FORBIDDEN: { status: 403, title: "The token's role does not allow this" },
  CONCURRENCY_CONFLICT: { status: 409, title: 'The aggregate kept changing; retries exhausted' },
  LEASE_SUPERSEDED: { status: 409, title: 'The command is stamped with a leader lease another instance has since taken over' },
  ALREADY_EXISTS: { status: 409, title: 'The resource already exists' },
  ILLEGAL_TRANSITION: { status: 409, title: 'The command is not allowed in the current state' },
  PRECONDITION_FAILED: { status: 422, title: 'A referenced resource is missing or unusable' },
  QUOTA_EXCEEDED: { status: 409, title: "The request does not fit in what is left of the tenant's quota" },
  READ_MODEL_BEHIND: { status: 504, title: 'The read model did not reach the requested sequence in time' },
  MIN_SEQ_AHEAD: { status: 400, title: 'minSeq is beyond the end of the log: no read model will ever reach it' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  UNAVAILABLE: { status: 503, title: 'A dependency is unavailable' },
  INTERNAL: { status: 500, title: 'Internal error' },
  STEP_TIMEOUT: { status: 504, title: 'A workflow step did not finish within its timeout' },
  AGENT_FAILED: { status: 502, title: 'An agent reported that a command failed' },
  INVENTORY_MISMATCH: { status: 409, title: "The inspected system does not have the node's enrolled MACs: the BMC address names another machine" },
  AGENT_LOST: { status: 504, title: 'The agent inside the machine stopped heartbeating while it ran a command' },
  APPROVER_UNKNOWN: { status: 403, title: 'The approver is not one this batch asked' },
  APPROVAL_SIGNATURE_INVALID: { status: 403, title: "The signature does not verify against the approver's key" },
  APPROVAL_EXPIRED: { status: 409, title: 'The approval batch expired before it reached its threshold' },
  APPROVAL_PENDING: { status: 409, title: 'A destructive command waits for its approval batch' },
  PROXY_REFUSED: { status: 422, title: 'A site.httpProxy request is outside what a step may reach' },
  AGENT_RESULT_REJECTED: { status: 502, title: 'An agent result did not verify against a registered key' },
  MASTER_KEY_INVALID: { status: 500, title: 'The master key (BC_MASTER_KEY or the key file) is malformed' },
  EVENT_KEY_INVALID: { status: 500, title: 'The event key (BC_EVENT_KEY or the key file) is malformed' },
  SECRET_UNSEALABLE: { status: 500, title: 'A sealed secret did not open: another master key, another secret, or altered' },
  GRANT_UNKNOWN_AGENT: { status: 403, title: 'The agent asking for a secret grant is not registered' },
  GRANT_FORGED: { status: 403, title: "A secret grant request is not signed by the agent's registered key" },
  GRANT_NOT_AUTHORISED: { status: 403, title: 'The agent may not use this secret' },
  GRANT_STALE: { status: 403, title: 'A secret grant request was issued too long ago (or in the future)' },
  JOIN_TOKEN_MALFORMED: { status: 403, title: 'The join token is not a token (bcj_<id>_<secret>)' },
  JOIN_TOKEN_UNKNOWN: { status: 403, title: 'No such join token' },
  JOIN_TOKEN_INVALID: { status: 403, title: 'The join token secret does not match' },
  JOIN_TOKEN_USED: { status: 403, title: 'The join token was already used (tokens are single-use)' },
  JOIN_TOKEN_EXPIRED: { status: 403, title: 'The join token has expired' },
  JOIN_ROLE_MISMATCH: { status: 403, title: 'The join token is for another role' },
  JOIN_SCOPE_MISMATCH: { status: 403, title: 'The join token is for another site or node' },
  JOIN_EXPECTATION_FAILED: { status: 403, title: 'The joining machine is not the one the token expects (product UUID)' },
  AGENT_IDENTITY_MISMATCH: { status: 403, title: 'A credential registers keys only for the agent the broker knows it as' },
  AGENT_KEY_UNPROVEN: { status: 403, title: "Replacing an agent's key needs the registered key's signature or a fresh join token" },
  IDEMPOTENCY_KEY_REUSED: { status: 409, title: 'The Idempotency-Key was used for another command, aggregate or body' },
  BOOT_TOKEN_NOT_DUE: { status: 409, title: 'No workflow of this node is waiting for a ramdisk to join' },
  BOOT_TOKEN_UNKNOWN_AGENT: { status: 403, title: 'The agent asking for a boot join token is not a registered site agent' },
  BOOT_TOKEN_FORGED: { status: 403, title: "A boot join token request is not signed by the site agent's registered key" },
  BOOT_TOKEN_STALE: { status: 403, title: 'A boot join token request was issued too long ago (or in the future)' },
  BOOT_TOKEN_NOT_AUTHORISED: { status: 403, title: "The node is not at the requesting agent's site" },
  BOOT_TOKEN_NOT_THIS_BOOT: { status: 409, title: "The boot a token is asked for is not the node's workflow's current boot" },
  BOOT_CONTESTED: {
    status: 409,
    title:
      'A ramdisk boot was contested (its script fetched twice, or a second ramdisk registered): the workflow fails closed and the node goes to maintenance',
  },
  BOOT_LOST: { status: 504, title: 'The machine did not fetch its boot script within the boot budget after the reset: the boot is retried' },
  BROKER_PERMISSION_DENIED: { status: 403, title: 'The broker does not let this credential publish on the subject: the request can never be answered' },
  COMMAND_NOT_SERVED_OVER_NATS: {
    status: 403,
    title: 'This command mints or holds credentials: it is accepted only by the HTTP API (or in-process), never over NATS',
  },
  COMMAND_SENDER_UNPROVEN: {
    status: 403,
    title: "Under broker auth a NATS command counts only when signed with the sending process's control-plane credential (fresh, unaltered)",
  },
  NOT_PERMITTED: { status: 403, title: 'Autonomy may not act here: an undeclared category, or a target that is part of the control plane' },
  BUDGET_EXHAUSTED: { status: 409, title: 'The consent budget of this scope and window is used up' },
  PLAN_DIGEST_MISMATCH: { status: 409, title: 'The workflow is not the plan that was approved (digest differs)' },
  INSTANCE_BUSY: {
    status: 409,
    title: 'Another operation runs on the instance: a remediation, or a create, start or stop the provider has not reached yet',
  },
  BROKER_AUTH_REQUIRED: {
    status: 403,
    title: 'Broker auth is off (BC_NATS_AUTH=none): secret grants and steps whose results are attestations (disk.wipe, image.write) are refused',
  },
  UNSUPPORTED: { status: 422, title: "The operation is not supported for this node (e.g. rescue on an agentless pool's node)" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ErrorCodes;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ErrorCodes, value);
}
