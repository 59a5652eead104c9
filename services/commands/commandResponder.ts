import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import { isInProcessOnly } from '../../schemas/commandExposure.ts';
import { serveRequests } from '../platform/commands/requestResponder.ts';
import { CommandHeaders } from '../../schemas/commandHeaders.ts';
import { LeaseFence } from './leaseFence.ts';

/**
 * Answers `bc.cmd.<name>` requests (queue group `commands`, so replicas share them) with the same result an HTTP
 * command gets: `{ ok: true, result }` or `{ ok: false, error: <problem> }`, the error code also in a header.
 */
/**
 * `served` names the commands answered here (default: all the bus has); the bus may carry more, for the process's
 * other entry points.
 */
export function serveCommands(nc: NatsConnection, bus: CommandBus, log: Logger, served?: ReadonlySet<string>): Subscription {
  const fence = new LeaseFence(nc, log);
  return serveRequests(
    nc,
    {
      subject: Subjects.allCommands,
      queue: 'commands',
      what: 'command',
      logRefusals: false,
      handle: async (msg) => {
        let payload: unknown;
        try {
          payload = msg.json();
        } catch (err) {
          throw new PlatformError('MALFORMED_JSON', 'request body is not valid JSON', { cause: err });
        }
        const name = msg.subject.slice(Subjects.command('').length);
        if (served && !served.has(name)) throw new PlatformError('UNKNOWN_COMMAND', `unknown command "${name}"; known: ${[...served].join(', ')}`);
        // Whatever the broker lets through: credential commands never run on a message that names no verified sender.
        if (isInProcessOnly(bus.definition(name)?.exposure ?? []))
          throw new PlatformError('COMMAND_NOT_SERVED_OVER_NATS', `${name} is not served over NATS; use the HTTP API`);
        const lease = msg.headers?.get(CommandHeaders.lease);
        if (lease) await fence.check(lease, name);
        const result = await bus.execute({
          name,
          payload,
          commandId: msg.headers?.get(CommandHeaders.commandId) || undefined,
          correlationId: msg.headers?.get(CommandHeaders.correlationId) || undefined,
          causationId: msg.headers?.get(CommandHeaders.causationId) || undefined,
          actor: 'nats:anonymous',
        });
        return { ok: true, result };
      },
    },
    log,
  );
}
