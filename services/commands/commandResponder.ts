import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { Subjects } from '../../schemas/subjects.ts';
import { problemOf, toPlatformError } from '../api/problem.ts';
import { PlatformError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { CommandBus } from './commandBus.ts';

/** Headers a NATS command request may carry; the body is the command's JSON payload. */
export const CommandHeaders = {
  commandId: 'Bc-Command-Id',
  correlationId: 'Bc-Correlation-Id',
  causationId: 'Bc-Causation-Id',
  errorCode: 'Bc-Error-Code',
} as const;

/**
 * Answers `bc.cmd.<name>` requests (queue group `commands`, so replicas share them) with the same result an HTTP
 * command gets: `{ ok: true, result }` or `{ ok: false, error: <problem> }`, the error code also in a header.
 */
export function serveCommands(nc: NatsConnection, bus: CommandBus, log: Logger): Subscription {
  const sub = nc.subscribe(Subjects.allCommands, { queue: 'commands' });
  void (async () => {
    for await (const msg of sub) void answer(msg, bus, log);
  })();
  return sub;
}

async function answer(msg: Msg, bus: CommandBus, log: Logger): Promise<void> {
  const name = msg.subject.slice(Subjects.command('').length);
  try {
    let payload: unknown;
    try {
      payload = msg.json();
    } catch (err) {
      throw new PlatformError('MALFORMED_JSON', 'request body is not valid JSON', { cause: err });
    }
    const result = await bus.execute({
      name,
      payload,
      commandId: msg.headers?.get(CommandHeaders.commandId) || undefined,
      correlationId: msg.headers?.get(CommandHeaders.correlationId) || undefined,
      causationId: msg.headers?.get(CommandHeaders.causationId) || undefined,
      actor: 'nats:anonymous',
    });
    msg.respond(JSON.stringify({ ok: true, result }));
  } catch (err) {
    const platformError = toPlatformError(err);
    if (platformError.code === 'INTERNAL') log.error({ err, command: name }, 'command failed');
    const h = natsHeaders();
    h.set(CommandHeaders.errorCode, platformError.code);
    msg.respond(JSON.stringify({ ok: false, error: problemOf(platformError, msg.subject) }), { headers: h });
  }
}
