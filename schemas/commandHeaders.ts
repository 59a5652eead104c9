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
} as const;
