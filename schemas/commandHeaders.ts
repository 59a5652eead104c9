/**
 * Headers a NATS command request may carry (the body is the command's JSON payload), and the header every NATS
 * request answer carries its error code in: part of the contract, because agents, plugins and the CLI send commands
 * and read refusals without importing the services that answer them.
 */
import { LEASE_HEADER } from './lease.ts';

export const CommandHeaders = {
  commandId: 'Bc-Command-Id',
  correlationId: 'Bc-Correlation-Id',
  causationId: 'Bc-Causation-Id',
  /** A leader's fencing token (`<service>/<term>`): the command runs only while that term leads. */
  lease: LEASE_HEADER,
  errorCode: 'Bc-Error-Code',
  /**
   * Who sends a command under broker auth: the sender's NATS user JWT, the time it signed (ms since the epoch), and
   * its user key's Ed25519 signature over `commandSigningText` (`services/platform/commands/commandSender.ts`).
   */
  sender: 'Bc-Sender',
  sentAt: 'Bc-Sent-At',
  senderSignature: 'Bc-Sender-Signature',
} as const;

/** What a command's sender signs: the command as sent, headers and body, and when. One line per field. */
export interface CommandSigningFields {
  readonly name: string;
  readonly commandId: string;
  readonly correlationId?: string | undefined;
  readonly causationId?: string | undefined;
  readonly lease?: string | undefined;
  readonly sentAt: string;
  /** SHA-256 of the request body as sent, base64url. */
  readonly bodySha256: string;
}

/** `bc-command/v1` and the fields, one per line (none of them may hold a newline: NATS headers cannot). */
export const commandSigningText = (f: CommandSigningFields): string =>
  ['bc-command/v1', f.name, f.commandId, f.correlationId ?? '', f.causationId ?? '', f.lease ?? '', f.sentAt, f.bodySha256].join('\n');
