import { randomUUID } from 'node:crypto';
import type { CommandResult } from '../../../schemas/api.ts';
import type { CommandBus, CommandRequest } from '../../../services/platform/commands/commandBus.ts';
import { PlatformError, issuesOf } from '../../../schemas/platformError.ts';

/**
 * A command bus that validates like the real one and answers at once without NATS: with it, the HTTP figure is
 * the ceiling the HTTP layer alone (fastify, zod validation and serialisation, metrics) allows on this machine.
 */
export function stubBus(real: CommandBus): CommandBus {
  let seq = 0;
  const stub = Object.create(real) as CommandBus;
  Object.assign(stub, {
    names: () => real.names(),
    definition: (name: string) => real.definition(name),
    async execute(request: CommandRequest): Promise<CommandResult> {
      const command = real.definition(request.name);
      if (!command) throw new PlatformError('UNKNOWN_COMMAND', `unknown command "${request.name}"`);
      const parsed = command.schema.safeParse(request.payload);
      if (!parsed.success) throw new PlatformError('VALIDATION_FAILED', `invalid ${command.name} command`, { issues: issuesOf(parsed.error) });
      const commandId = request.commandId ?? randomUUID();
      const id = command.aggregateId(parsed.data, { commandId, actor: request.actor, now: new Date().toISOString() });
      return {
        commandId,
        aggregate: { type: `${command.aggregate.module}.${command.aggregate.type}`, id },
        seq: ++seq,
        duplicate: false,
        events: [{ type: 'Stubbed', version: 1, data: parsed.data }],
      };
    },
  });
  return stub;
}
