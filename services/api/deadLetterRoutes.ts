import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '../../schemas/api.ts';
import { DeadLetterPage } from '../../schemas/deadLetters.ts';
import type { DeadLetterReader } from '../platform/deadLetters/deadLetterReader.ts';

const ConsumerName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,100}$/, 'a consumer name, e.g. projector_nodes')
  .describe("Only this consumer's entries (e.g. `projector_nodes`, `workflow_orchestrator`)");

/**
 * `/v1/dead-letters` (admins and operators): the messages consumers set aside instead of acting on them (a raw
 * publish on `bc.evt.>`, an altered or undecodable batch), where they sit in their stream, and why. They are the
 * record of forged messages, so no route deletes them: handling one keeps it, marked with the token that did.
 */
export const deadLetterRoutes: FastifyPluginAsync<{ deadLetters: DeadLetterReader }> = async (app, { deadLetters }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/dead-letters', {
    schema: {
      tags: ['dead letters'],
      summary: 'Quarantined messages, oldest first: open ones, or (handled=true) those marked handled, with who and when',
      querystring: z.object({
        consumer: ConsumerName.optional(),
        handled: z
          .enum(['true', 'false'])
          .default('false')
          .transform((v) => v === 'true')
          .describe('List the entries marked handled instead of the open ones'),
        afterSeq: z.coerce.number().int().nonnegative().default(0).describe('Continue after this entry (`nextAfterSeq` of the previous page)'),
        limit: z.coerce.number().int().min(1).max(500).default(100),
      }),
      response: { 200: DeadLetterPage, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => deadLetters.page(req.query),
  });

  api.post('/v1/dead-letters/handle', {
    schema: {
      tags: ['dead letters'],
      summary: 'Mark open quarantined messages handled: they leave the open list and the counts, and are kept with who and when',
      querystring: z.object({ consumer: ConsumerName.optional() }),
      response: { 200: z.object({ handled: z.number().int().nonnegative() }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => ({ handled: await deadLetters.markHandled(req.principal?.actor ?? 'http:anonymous', req.query.consumer) }),
  });
};
