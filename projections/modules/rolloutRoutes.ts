import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { RolloutDetailView, RolloutStatus, RolloutView } from '../../schemas/fleet/rolloutViews.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { getRollout, listRollouts } from './rolloutQueries.ts';

/** `GET /v1/rollouts` and `GET /v1/rollouts/:rolloutId`, with `?minSeq=` read-your-writes. */
export const rolloutReadRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number }> = async (app, { reader, waitTimeoutMs }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/rollouts', {
    schema: {
      tags: ['modules'],
      summary: 'Rollouts, newest first (of one module or in one status)',
      querystring: MinSeqQuery.extend({ module: z.string().optional(), status: RolloutStatus.optional() }),
      response: { 200: z.object({ items: z.array(RolloutView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listRollouts(reader.db(), { module: req.query.module, status: req.query.status }) };
    },
  });

  api.get('/v1/rollouts/:rolloutId', {
    schema: {
      tags: ['modules'],
      summary: 'One rollout: its waves, each host’s outcome and, in a rollback, what each target restored',
      params: z.object({ rolloutId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: RolloutDetailView, '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const rollout = getRollout(reader.db(), req.params.rolloutId);
      if (!rollout) throw new PlatformError('NOT_FOUND', `rollout ${req.params.rolloutId} not found`);
      return rollout;
    },
  });
};
