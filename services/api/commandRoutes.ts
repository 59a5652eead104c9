import type { FastifyPluginAsync } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CommandResult, Problem } from '../../schemas/api.ts';
import type { Principal } from '../../schemas/auth/roles.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { CommandDefinition } from '../platform/commands/commandDefinition.ts';
import type { ApiContext } from './apiContext.ts';

const CommandHeaders = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .describe(
      "Retrying with the same key (yours: keys are scoped to the caller's token) answers the original result; the same key with another command, node or body answers 409 IDEMPOTENCY_KEY_REUSED",
    ),
  'x-correlation-id': z.string().max(128).optional(),
  'x-causation-id': z.string().max(128).optional(),
});

/**
 * A tenant's command acts as that tenant: the API writes its `tenantId` into the payload, and a tenant naming another
 * tenant is refused. The deciders then allow only the tenant's own nodes (or a free one to claim).
 */
function actingTenant(principal: Principal | undefined, body: unknown): unknown {
  const tenantId = principal?.tenantId;
  if (!tenantId || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const named = (body as { tenantId?: unknown }).tenantId;
  if (named !== undefined && named !== tenantId) throw new PlatformError('FORBIDDEN', 'a tenant token acts only for its own tenant');
  return { ...body, tenantId };
}

/**
 * `POST /v1/commands/<name>`: one route per command so each body schema is documented and validated. Only `commands`
 * (those exposed to operators, tenants and admins) get a route; the bus they run on carries the process's others too.
 */
export const commandRoutes: FastifyPluginAsync<{ ctx: ApiContext; commands: readonly CommandDefinition[] }> = async (app, { ctx, commands }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  for (const command of commands) {
    const { name } = command;
    api.post(`/v1/commands/${name}`, {
      schema: {
        tags: ['commands'],
        summary: name,
        headers: CommandHeaders,
        body: command.schema,
        response: { 200: CommandResult, 201: CommandResult, '4xx': Problem, '5xx': Problem },
      },
      // The bus validates the body (the same check NATS commands get) and builds the result: the schemas here
      // document the route, and checking them twice would double the per-command CPU.
      validatorCompiler: (route) =>
        route.httpPart === 'body' ? (data: unknown) => ({ value: data }) : validatorCompiler(route as unknown as Parameters<typeof validatorCompiler>[0]),
      serializerCompiler: () => (data) => JSON.stringify(data),
      handler: async (req, reply) => {
        const stop = ctx.metrics.commandSeconds.startTimer({ command: name });
        try {
          const result = await ctx.bus.execute({
            name,
            payload: actingTenant(req.principal, req.body),
            idempotencyKey: req.headers['idempotency-key'],
            correlationId: req.headers['x-correlation-id'],
            causationId: req.headers['x-causation-id'],
            actor: req.principal?.actor ?? 'http:anonymous',
          });
          ctx.metrics.commands.inc({ command: name, outcome: 'OK' });
          return reply.code(result.events.length > 0 && !result.duplicate ? 201 : 200).send(result);
        } catch (err) {
          ctx.metrics.commands.inc({ command: name, outcome: err instanceof PlatformError ? err.code : 'INTERNAL' });
          throw err;
        } finally {
          stop();
        }
      },
    });
  }
  // Anything else under /v1/commands/ is a command this control plane does not have.
  app.all('/v1/commands/*', { schema: { hide: true } }, async (req) => {
    throw new PlatformError(
      'UNKNOWN_COMMAND',
      `unknown command "${req.url.slice('/v1/commands/'.length).split('?')[0]}"; known: ${commands.map((c) => c.name).join(', ')}`,
    );
  });
};
