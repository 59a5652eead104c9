/**
 * Why a bcx plugin did not start or did not answer. An operation's own failure carries the plugin's code instead
 * (upper snake case, e.g. `SPEC_REFUSED`, or `PLUGIN_ERROR` / `UNKNOWN_OPERATION` from the SDK).
 */
export const BcxErrorCodes = {
  SANDBOX_UNAVAILABLE: 'This host cannot sandbox a plugin (no bubblewrap or setpriv, not root, or no seccomp filter for this architecture)',
  INVALID_PLUGIN_ID: 'A plugin id is lower-case letters, digits, ".", "_" and "-", at most 63, starting with a letter or digit',
  PLUGIN_USER_FAILED: "The plugin's own account could not be read or created",
  PLUGIN_STATE_FAILED: "The plugin's state folder could not be made its own",
  PLUGIN_PIN_MISMATCH: "The plugin's program does not hash to its pinned sha256: it is not started",
  PLUGIN_HELLO_REFUSED: 'The plugin did not say hello in time, or its hello is not the pinned plugin speaking bcx 1',
  PLUGIN_PROTOCOL_ERROR: 'The plugin wrote something that is not a bcx frame: it is stopped',
  PLUGIN_EXITED: 'The plugin exited before it answered',
  PLUGIN_NOT_RUNNING: 'The plugin is stopped or between restarts',
  INVOKE_TIMEOUT: 'The plugin did not answer in time',
} as const;
export type BcxErrorCode = keyof typeof BcxErrorCodes;

export class BcxError extends Error {
  override name = 'BcxError';
  constructor(
    readonly code: BcxErrorCode | (string & {}),
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(`${code}: ${message}`, options);
  }
}
