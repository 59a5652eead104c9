import type { ErrorCode } from '../../../schemas/errorCodes.ts';
import { PlatformError } from '../../../schemas/platformError.ts';

/** Why a broker-trust operation failed; stable, for matching (the platform code says how it crosses boundaries). */
export const BrokerTrustReason = {
  /** A key file or stored JWT under the broker directory does not parse or does not match its key. */
  MATERIAL_CORRUPT: 'INTERNAL',
  /** A public key handed in is not a NATS user nkey (`U…`). */
  INVALID_PUBLIC_KEY: 'VALIDATION_FAILED',
  /** A role grant names ids that cannot be subject tokens. */
  INVALID_GRANT: 'VALIDATION_FAILED',
  /** Credentials were asked for a user key that has been revoked. */
  USER_REVOKED: 'PRECONDITION_FAILED',
  /** The server refused or did not answer an account JWT push (`$SYS.REQ.CLAIMS.UPDATE`). */
  CLAIMS_UPDATE_FAILED: 'UNAVAILABLE',
} as const satisfies Record<string, ErrorCode>;

export type BrokerTrustReason = keyof typeof BrokerTrustReason;

/** A broker-trust failure. Messages never carry seeds or whole JWTs. */
export class BrokerTrustError extends PlatformError {
  override name = 'BrokerTrustError';
  constructor(
    readonly reason: BrokerTrustReason,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(BrokerTrustReason[reason], message, options);
  }
}
