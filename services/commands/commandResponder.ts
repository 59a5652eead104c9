import type { NatsConnection } from '@nats-io/transport-node';
import { commandNameOf } from '../../schemas/commandPartitions.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { toPlatformError } from '../platform/problem.ts';
import type { CommandChannel } from '../platform/commands/commandChannel.ts';
import type { Logger } from '../platform/logger.ts';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import { isInProcessOnly } from '../../schemas/commandExposure.ts';
import { serveRequests, type RequestService } from '../platform/commands/requestResponder.ts';
import { CommandHeaders } from '../../schemas/commandHeaders.ts';
import { CommandSenders } from '../platform/commands/commandSender.ts';
import { identityOf } from '../platform/nats/connectionIdentity.ts';
import { LeaseFence } from './leaseFence.ts';
import { DEFAULT_PARTITION_TIMING, ResponderPartitions, type PartitionTiming } from './responderPartitions.ts';

export interface CommandResponder {
  /** This replica's share of the partitions; undefined when it serves only the queue group. */
  readonly partitions: ResponderPartitions | undefined;
  /** The same service for this process's own engine commands: the same checks and answers, without NATS. */
  readonly local: CommandChannel;
  /** Stops answering; the other replicas take its partitions at once. */
  unsubscribe(): void;
}

export interface ServeCommandsOptions {
  /**
   * `false`: serve only the queue group of `bc.cmd.>`, never a partition, so replicas race on every aggregate (what
   * the tests of optimistic concurrency across processes want). Default: take a share of the partitions.
   */
  partitions?: false | PartitionTiming;
}

/**
 * Answers `bc.cmd.<name>` requests (queue group `commands`, so replicas share them) and the requests routed to the
 * partitions this replica owns (`bc.cmdp.<partition>.<name>`), with the same result an HTTP command gets:
 * `{ ok: true, result }` or `{ ok: false, error: <problem> }`, the error code also in a header. `served` names the
 * commands answered here (default: all the bus has); the bus may carry more, for the process's other entry points.
 * Under broker auth a request is decided only when signed by a control-plane credential, whose user its events then
 * record as the actor (`CommandSenders`); without it, `nats:anonymous`.
 */
export function serveCommands(
  nc: NatsConnection,
  bus: CommandBus,
  log: Logger,
  served?: ReadonlySet<string>,
  options: ServeCommandsOptions = {},
): CommandResponder {
  const fence = new LeaseFence(nc, log);
  // Under broker auth this process holds a credential, and every request must prove its sender's (`commandSender.ts`).
  const senders = new CommandSenders(identityOf(nc));
  const execute = async (
    name: string,
    payload: unknown,
    context: { commandId?: string; correlationId?: string; causationId?: string; lease?: string; actor: string },
  ) => {
    if (served && !served.has(name)) throw new PlatformError('UNKNOWN_COMMAND', `unknown command "${name}"; known: ${[...served].join(', ')}`);
    // Whatever the broker lets through: credential commands never run on a message that names no verified sender.
    if (isInProcessOnly(bus.definition(name)?.exposure ?? []))
      throw new PlatformError('COMMAND_NOT_SERVED_OVER_NATS', `${name} is not served over NATS; use the HTTP API`);
    if (context.lease) await fence.check(context.lease, name);
    const { commandId, correlationId, causationId, actor } = context;
    return bus.execute({ name, payload, commandId, correlationId, causationId, actor });
  };
  const service: RequestService = {
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
      const header = (name: string) => msg.headers?.get(name) || undefined;
      const name = commandNameOf(msg.subject);
      const result = await execute(name, payload, {
        commandId: header(CommandHeaders.commandId),
        correlationId: header(CommandHeaders.correlationId),
        causationId: header(CommandHeaders.causationId),
        lease: header(CommandHeaders.lease),
        actor: senders.actorOf(msg, name),
      });
      return { ok: true, result };
    },
  };
  // What a request would answer, as the thrown error a remote caller rebuilds from the reply (`sendCommand`).
  const local: CommandChannel = {
    send: async (name, payload, options) => {
      try {
        return await execute(name, payload, { ...options, actor: options.actor ?? 'in-process' });
      } catch (err) {
        const error = toPlatformError(err);
        if (error.code === 'INTERNAL') log.error({ err, command: name }, 'command failed');
        throw error;
      }
    },
  };
  const queue = serveRequests(nc, service, log);
  const timing = options.partitions ?? DEFAULT_PARTITION_TIMING;
  const partitions =
    timing === false
      ? undefined
      : new ResponderPartitions(nc, (p) => serveRequests(nc, { ...service, subject: Subjects.commandPartition(p) }, log), log, timing);
  partitions?.start();
  return {
    partitions,
    local,
    unsubscribe() {
      partitions?.stop();
      queue.unsubscribe();
    },
  };
}
