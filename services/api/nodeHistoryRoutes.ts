import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { foldNodeHistory, type NodeBatch } from '../metal/node/history.ts';
import { Problem } from '../../schemas/api.ts';
import { HistoryInstant, NodeHistory } from '../../schemas/metal/nodeHistory.ts';
import { ResourceId } from '../../schemas/ids.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ApiContext } from './apiContext.ts';
import type { Tenancy } from './tenancy.ts';

/**
 * `GET /v1/nodes/:nodeId/history?at=<seq|time>`: the node as its events left it at any instant of the log, folded on
 * demand from the node's subject. A tenant (who must own the node, like on every node route) sees the batches from
 * when it took the node on; an instant before that is NOT_FOUND, as if the node had no history then.
 */
export const nodeHistoryRoutes: FastifyPluginAsync<{ ctx: ApiContext; tenancy: Tenancy }> = async (app, { ctx, tenancy }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/nodes/:nodeId/history', {
    schema: {
      tags: ['nodes'],
      summary: "A node's state at an instant (`at`: a stream sequence or an ISO time; absent: now), folded from its events, with its timeline",
      params: z.object({ nodeId: ResourceId }),
      querystring: z.object({ at: HistoryInstant.optional() }),
      response: { 200: NodeHistory, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      const { nodeId } = req.params;
      const tenantId = req.principal?.tenantId;
      const batches: NodeBatch[] = [];
      const visible = new Set<number>();
      for await (const stored of ctx.store.readAfter(Subjects.aggregateEvents('metal', 'node', nodeId), 0)) {
        batches.push({ seq: stored.seq, events: stored.batch.events });
        if (!tenantId || (await tenancy.canSee(tenantId, stored.seq, stored.subject, stored.batch.events))) visible.add(stored.seq);
      }
      const history = foldNodeHistory(nodeId, batches, req.query.at, (seq) => visible.has(seq));
      if (!history) throw new PlatformError('NOT_FOUND', `node ${nodeId} has no history at that instant`);
      return history;
    },
  });
};
