/** Why a VM-backed BMC operation failed. */
export const VmErrorCodes = {
  QMP_ERROR: 'QEMU refused a QMP command',
  QMP_CLOSED: 'The QMP connection closed (QEMU exited) before the answer came',
  QMP_TIMEOUT: 'QEMU did not answer a QMP command in time',
  VM_START_FAILED: 'The QEMU process did not start or exited during start-up',
  MEDIA_FETCH_FAILED: 'The virtual media image URL could not be fetched',
} as const;
export type VmErrorCode = keyof typeof VmErrorCodes;

export class VmError extends Error {
  override name = 'VmError';
  constructor(
    readonly code: VmErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
