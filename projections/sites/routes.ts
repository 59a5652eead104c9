import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { SiteView } from '../../schemas/site/views.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { getSite, listSites } from './queries.ts';

/** `GET /v1/sites` and `GET /v1/sites/:siteId`, with `?minSeq=` read-your-writes. */
export const siteRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number }> = async (app, { reader, waitTimeoutMs }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/sites', {
    schema: { tags: ['sites'], summary: 'All sites', querystring: MinSeqQuery, response: { 200: z.object({ items: z.array(SiteView) }), '4xx': Problem } },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listSites(reader.db()) };
    },
  });

  api.get('/v1/sites/:siteId', {
    schema: {
      tags: ['sites'],
      summary: 'One site',
      params: z.object({ siteId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: SiteView, '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const site = getSite(reader.db(), req.params.siteId);
      if (!site) throw new PlatformError('NOT_FOUND', `site ${req.params.siteId} not found`);
      return site;
    },
  });
};
