import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs (pino, as fastify uses). Known secret-bearing keys are redacted wherever they appear, as a
 * second line of defence behind secrets being references everywhere. `destination` (default stdout) lets a test read
 * exactly what would have been written.
 */
export function createLogger(name: string, level = process.env.BC_LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: ['*.password', '*.token', '*.secret', '*.authorization', 'req.headers.authorization'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
