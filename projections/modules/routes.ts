import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { ModuleVersionView, ModuleView, PublisherView } from '../../schemas/fleet/views.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { getModule, listModules, listPublishers } from './queries.ts';

/** `GET /v1/modules`, `GET /v1/modules/:module` and `GET /v1/module-publishers`, with `?minSeq=` read-your-writes. */
export const moduleReadRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number }> = async (app, { reader, waitTimeoutMs }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/modules', {
    schema: {
      tags: ['modules'],
      summary: 'All modules',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(ModuleView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listModules(reader.db()) };
    },
  });

  api.get('/v1/modules/:module', {
    schema: {
      tags: ['modules'],
      summary: 'One module and its published versions, with their signed manifests',
      params: z.object({ module: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: ModuleView.extend({ versions: z.array(ModuleVersionView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const module = getModule(reader.db(), req.params.module);
      if (!module) throw new PlatformError('NOT_FOUND', `module ${req.params.module} not found`);
      return module;
    },
  });

  api.get('/v1/module-publishers', {
    schema: {
      tags: ['modules'],
      summary: 'Module publishers and their keys',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(PublisherView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listPublishers(reader.db()) };
    },
  });
};
