import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs (pino, as fastify uses). Known secret-bearing keys are redacted wherever they appear, as a
 * second line of defence behind secrets being references everywhere.
 */
export function createLogger(name: string, level = process.env.BC_LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name,
    level,
    redact: { paths: ['*.password', '*.token', '*.secret', '*.authorization', 'req.headers.authorization'], censor: '[redacted]' },
  });
}
