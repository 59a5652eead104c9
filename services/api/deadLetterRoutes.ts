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
 * publish on `bc.evt.>`, an altered or undecodable batch), where they sit in their stream, and why.
 */
export const deadLetterRoutes: FastifyPluginAsync<{ deadLetters: DeadLetterReader }> = async (app, { deadLetters }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/dead-letters', {
    schema: {
      tags: ['dead letters'],
      summary: 'Quarantined messages, oldest first',
      querystring: z.object({
        consumer: ConsumerName.optional(),
        afterSeq: z.coerce.number().int().nonnegative().default(0).describe('Continue after this entry (`nextAfterSeq` of the previous page)'),
        limit: z.coerce.number().int().min(1).max(500).default(100),
      }),
      response: { 200: DeadLetterPage, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => deadLetters.page(req.query),
  });

  api.delete('/v1/dead-letters', {
    schema: {
      tags: ['dead letters'],
      summary: 'Clear quarantined messages once handled (the originals stay in their stream)',
      querystring: z.object({ consumer: ConsumerName.optional() }),
      response: { 200: z.object({ purged: z.number().int().nonnegative() }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => ({ purged: await deadLetters.purge(req.query.consumer) }),
  });
};
