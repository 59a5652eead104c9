/** Why a boot-path packet was refused; the servers log the code and drop the packet (no answer, no crash). */
export const PxeErrorCodes = {
  DHCP_MALFORMED: 'The datagram is not a well-formed BOOTP/DHCP message',
  TFTP_MALFORMED: 'The datagram is not a well-formed TFTP packet',
} as const;
export type PxeErrorCode = keyof typeof PxeErrorCodes;

export class PxeError extends Error {
  override name = 'PxeError';
  constructor(
    readonly code: PxeErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
