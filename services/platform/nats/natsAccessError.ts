import type { ErrorCode } from '../../../schemas/errorCodes.ts';
import { PlatformError } from '../../../schemas/platformError.ts';

/** Why a control-plane process will not use a NATS server; stable, for matching. */
export const NatsAccessReason = {
  /** Broker auth is on (`BC_NATS_AUTH=operator`) but the server lets connections in without credentials. */
  SERVER_ACCEPTS_ANONYMOUS: 'PRECONDITION_FAILED',
  /** Broker auth is on but there are neither `BC_NATS_CREDS` nor a trust chain in the broker directory to issue them. */
  BROKER_MATERIAL_MISSING: 'PRECONDITION_FAILED',
  /** Nothing answers at the server's URL. */
  NATS_UNREACHABLE: 'UNAVAILABLE',
} as const satisfies Record<string, ErrorCode>;

export type NatsAccessReason = keyof typeof NatsAccessReason;

export class NatsAccessError extends PlatformError {
  override name = 'NatsAccessError';
  constructor(
    readonly reason: NatsAccessReason,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(NatsAccessReason[reason], message, options);
  }
}
