import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import type { Logger } from '../platform/logger.ts';
import type { StepCommandSender } from './attemptClaim.ts';
import { isSettledRefusal } from '../platform/processManager/engineCommands.ts';

/**
 * Runs an attempt's engine commands (`workflow.startStep`, `completeStep`, `failStep`, `rejectResult`) on the
 * executor's own CommandBus instead of a request to the commands service: the executor holds the event key, and the
 * workflow snapshot its bus keeps is the one the attempt's previous command left, so deciding costs no read and no
 * round trip. The append's expected sequence stays the last word: a snapshot another process overtook is refused,
 * read again and decided again. Same answers as `sendEngineCommand`: a domain refusal is logged and settled
 * (`undefined`); anything else is retried with the same command id (so at most one append) until `signal` ends.
 */
export function stepCommandSender(bus: CommandBus, log: Logger, signal: AbortSignal): StepCommandSender {
  return async (name, payload, commandId) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await bus.execute({ name, payload, commandId, causationId: commandId, actor: 'workflow-executor' });
      } catch (err) {
        if (isSettledRefusal(err)) {
          log.info({ command: name, commandId, code: err.code, detail: err.message }, 'engine command refused; treating as settled');
          return undefined;
        }
        signal.throwIfAborted();
        log.warn({ err, command: name, commandId, attempt }, 'engine command failed; retrying');
        await sleep(Math.min(100 * 2 ** attempt, 5_000), undefined, { signal });
      }
    }
  };
}
