/**
 * Error codes of a failed agent result that say the same command against the same machine fails the same way again:
 * the step fails at once instead of spending its attempts and backoff on answers known in advance. These are the
 * Redfish client's (`daemon/redfish/errors.ts`): the BMC does not offer the operation or value (UNSUPPORTED); it took a
 * boot override and reports another target or keeps it armed (BOOT_OVERRIDE_MISMATCH); it serves several systems and
 * the address names none (SYSTEM_AMBIGUOUS); it answered a firmware update without applying it (UPDATE_NOT_APPLIED); it
 * presents a certificate other than the pinned one (TLS_PIN_MISMATCH) or redirects off its host (REDIRECT_REFUSED); it
 * rejects the credentials (AUTH: a human must fix them, and a BMC locks an account out after a few tries).
 */
export const permanentAgentFailures: ReadonlySet<string> = new Set([
  'REDFISH_UNSUPPORTED',
  'REDFISH_BOOT_OVERRIDE_MISMATCH',
  'REDFISH_SYSTEM_AMBIGUOUS',
  'REDFISH_UPDATE_NOT_APPLIED',
  'REDFISH_TLS_PIN_MISMATCH',
  'REDFISH_REDIRECT_REFUSED',
  'REDFISH_AUTH',
]);
