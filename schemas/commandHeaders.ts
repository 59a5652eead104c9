/**
 * Headers a NATS command request may carry (the body is the command's JSON payload), and the header every NATS
 * request answer carries its error code in: part of the contract, because agents, plugins and the CLI send commands
 * and read refusals without importing the services that answer them.
 */
export const CommandHeaders = {
  commandId: 'Bc-Command-Id',
  correlationId: 'Bc-Correlation-Id',
  causationId: 'Bc-Causation-Id',
  errorCode: 'Bc-Error-Code',
} as const;
