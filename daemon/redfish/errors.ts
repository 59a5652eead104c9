/**
 * The closed set of failures the Redfish client reports. Callers (the site agent's provisioning steps) branch on
 * `code`, never on message text: AUTH and TLS_PIN_MISMATCH need a human, UNAVAILABLE and TIMEOUT can be retried,
 * UNSUPPORTED means this BMC cannot do it at all.
 */
export const RedfishErrorCodes = {
  REDFISH_AUTH: 'The BMC rejected the credentials or the session',
  REDFISH_NOT_FOUND: 'The BMC has no such resource',
  REDFISH_UNSUPPORTED: 'The BMC does not offer this operation or value',
  REDFISH_BAD_REQUEST: 'The BMC refused the request as invalid in its current state',
  REDFISH_TIMEOUT: 'The BMC did not answer or settle in time',
  REDFISH_TLS_PIN_MISMATCH: "The BMC's TLS certificate is not the pinned or a trusted one",
  REDFISH_UNAVAILABLE: 'The BMC could not be reached or failed internally',
  REDFISH_TASK_FAILED: 'A BMC task ended in Exception, Killed or Cancelled',
  REDFISH_SYSTEM_AMBIGUOUS: 'The BMC serves several systems and the address names none of them',
  REDFISH_BOOT_OVERRIDE_MISMATCH: 'The BMC accepted a boot override but reports another target',
  REDFISH_RESET_NOT_OBSERVED: 'The BMC accepted a reset but the machine showed no sign of one, nor of a power-off',
  REDFISH_BIOS_NOT_APPLIED: 'BIOS settings did not show up as current after the reset that should apply them',
  REDFISH_UPDATE_NOT_APPLIED: 'The BMC answered a firmware update without a task, and no firmware version changed',
  REDFISH_REDIRECT_REFUSED: 'The BMC redirected somewhere other than https on the same host',
} as const;

export type RedfishErrorCode = keyof typeof RedfishErrorCodes;

export interface RedfishErrorDetails {
  cause?: unknown;
  /** HTTP status when the BMC answered. */
  status?: number;
  /** Redfish MessageIds from the error body, e.g. `Base.1.8.ActionParameterNotSupported`. */
  messageIds?: readonly string[];
}

export class RedfishError extends Error {
  override readonly name = 'RedfishError';
  readonly code: RedfishErrorCode;
  readonly status: number | undefined;
  readonly messageIds: readonly string[];

  // Messages are built by this module's callers from method, path and BMC message ids only: never from
  // request bodies or headers, which is what keeps passwords out of logs.
  constructor(code: RedfishErrorCode, message: string, details: RedfishErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = details.status;
    this.messageIds = details.messageIds ?? [];
  }
}

export function isRedfishError(error: unknown, code?: RedfishErrorCode): error is RedfishError {
  return error instanceof RedfishError && (code === undefined || error.code === code);
}

/** The one place HTTP status meets the error codes. */
export function codeForStatus(status: number): RedfishErrorCode {
  if (status === 401 || status === 403) return 'REDFISH_AUTH';
  if (status === 404 || status === 410) return 'REDFISH_NOT_FOUND';
  if (status === 405 || status === 501) return 'REDFISH_UNSUPPORTED';
  if (status === 408 || status === 504) return 'REDFISH_TIMEOUT';
  if (status === 429 || status === 503) return 'REDFISH_UNAVAILABLE';
  if (status >= 300 && status < 400) return 'REDFISH_REDIRECT_REFUSED';
  if (status >= 400 && status < 500) return 'REDFISH_BAD_REQUEST';
  return 'REDFISH_UNAVAILABLE';
}
