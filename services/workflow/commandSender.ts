import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import type { CommandResult } from '../../schemas/api.ts';
import { sendCommand } from '../commands/commandClient.ts';
import { PlatformError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';

/** Codes that mean "the command is moot" (already done, or overtaken): retrying cannot change the answer. */
const settled = new Set(['ILLEGAL_TRANSITION', 'NOT_FOUND', 'ALREADY_EXISTS', 'PRECONDITION_FAILED', 'VALIDATION_FAILED', 'UNKNOWN_COMMAND', 'IDEMPOTENCY_KEY_REUSED']);

/**
 * Sends an engine command with a deterministic id until it is answered: infrastructure trouble is retried with
 * backoff (the id makes that safe), a domain refusal is logged, handed to `onRefused` and returned as `undefined`.
 */
export async function sendEngineCommand(
  nc: NatsConnection,
  log: Logger,
  signal: AbortSignal,
  name: string,
  payload: unknown,
  commandId: string,
  onRefused?: (refusal: PlatformError) => void,
): Promise<CommandResult | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await sendCommand(nc, name, payload, { commandId, causationId: commandId });
    } catch (err) {
      if (err instanceof PlatformError && settled.has(err.code)) {
        log.info({ command: name, commandId, code: err.code, detail: err.message }, 'engine command refused; treating as settled');
        onRefused?.(err);
        return undefined;
      }
      signal.throwIfAborted();
      log.warn({ err, command: name, commandId, attempt }, 'engine command failed; retrying');
      await sleep(Math.min(100 * 2 ** attempt, 5_000), undefined, { signal });
    }
  }
}
