import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, pageOf, Problem } from '../../schemas/api.ts';
import { nodeStates } from '../../schemas/metal/nodeState.ts';
import { NodeView } from '../../schemas/metal/views.ts';
import { PlatformError } from '../../services/platform/errors.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { getNode, listNodes } from './queries.ts';

/** `GET /v1/nodes` and `GET /v1/nodes/:nodeId`, with `?minSeq=` read-your-writes. */
export const nodeRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number }> = async (app, { reader, waitTimeoutMs }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/nodes', {
    schema: {
      tags: ['nodes'],
      summary: 'Nodes, filtered by site and state, ordered by id',
      querystring: MinSeqQuery.extend({
        siteId: z.string().optional(),
        state: z.enum(nodeStates).optional(),
        cursor: z.string().optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
      }),
      response: { 200: pageOf(NodeView), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      // A tenant's list holds its own nodes only (ownership is checked per node on the other routes).
      return listNodes(reader.db(), { ...req.query, tenantId: req.principal?.tenantId ?? null });
    },
  });

  api.get('/v1/nodes/:nodeId', {
    schema: {
      tags: ['nodes'],
      summary: 'One node',
      params: z.object({ nodeId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: NodeView, '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const node = getNode(reader.db(), req.params.nodeId);
      if (!node) throw new PlatformError('NOT_FOUND', `node ${req.params.nodeId} not found`);
      return node;
    },
  });
};
