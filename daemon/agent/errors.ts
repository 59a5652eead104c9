/**
 * Failure codes an agent reports in a result's `error_code`, and the error type agent code throws. The control
 * plane branches on these codes: INTERRUPTED and EXPIRED mean "not executed, decide again", the others are the
 * outcome of an execution attempt.
 */
export const AgentErrorCodes = {
  INTERRUPTED: 'A destructive command was started before a crash and is not run again',
  EXPIRED: 'The command arrived after its notAfter time and was not executed',
  INVALID_COMMAND: 'The command or its parameters do not match the contract',
  WRONG_AGENT: 'The command was delivered to an agent that does not run this kind or node',
  CREDENTIALS_MISSING: 'The BMC credentials reference does not resolve',
  DRIVER_ERROR: 'The BMC or the machine failed to do what was asked',
  IMAGE_UNAVAILABLE: 'The image could not be fetched',
  IMAGE_CHECKSUM_MISMATCH: 'The image bytes do not hash to the expected sha256',
  IMAGE_TOO_LARGE: 'The image does not fit on the target disk',
  DISK_VERIFY_FAILED: 'A wiped disk did not read back as zeros',
  DISK_SIZE_UNKNOWN: 'A disk reports no size (zero or unreadable): nothing on it can be wiped or written',
  NO_DISK: 'The machine has no disk to act on',
  HARDWARE_UNREADABLE: "The kernel's view of the hardware (procfs, sysfs) cannot be read",
  MODULE_MISMATCH: 'The bundle is not the module version the command names (name, version or manifest digest differ)',
  MODULE_DRIFT: "A module's installed files differ from its manifest: changed, missing or added",
  RUNTIME_NOT_LOADED: 'No runtime plugin of that id runs on the host, or it is between restarts',
  WARM_START_UNSUPPORTED: 'A warm slot was asked of a runtime whose manifest does not declare warm-start',
  INSTANCE_FAILED: "The runtime answered the instance's state as error, refused the spec or failed before answering",
  MODULE_STATE_UNSAFE: "The module's folder on the host holds something it never writes (a link, a device)",
} as const;
export type AgentErrorCode = keyof typeof AgentErrorCodes;

export class AgentError extends Error {
  override name = 'AgentError';
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** The code to report for anything thrown while executing: agent codes pass through, the rest is a driver error. */
export function agentErrorCodeOf(error: unknown): string {
  if (error instanceof AgentError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  // Redfish client codes (REDFISH_*) are stable too and tell the control plane whether a retry can help; a bundle a
  // host refuses is refused with the verifier's own code (BUNDLE_*, schemas/errorCodes.ts), as the control plane would.
  if (typeof code === 'string' && (code.startsWith('REDFISH_') || code.startsWith('BUNDLE_'))) return code;
  return 'DRIVER_ERROR';
}
