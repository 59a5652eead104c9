import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, pageOf, Problem } from '../../schemas/api.ts';
import { WorkflowView } from '../../schemas/metal/workflowViews.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { getWorkflow, listNodeWorkflows, listWorkflows } from './queries.ts';

/** `GET /v1/workflows`, `GET /v1/workflows/:workflowId` and `GET /v1/nodes/:nodeId/workflows` (newest first), with `?minSeq=`. */
export const workflowRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number }> = async (app, { reader, waitTimeoutMs }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/workflows', {
    schema: {
      tags: ['workflows'],
      summary: 'Workflows across the fleet, newest first, optionally in one state',
      querystring: MinSeqQuery.extend({
        state: WorkflowView.shape.state.optional(),
        cursor: z.string().optional(),
        limit: z.coerce.number().int().min(1).max(500).default(50),
      }),
      response: { 200: pageOf(WorkflowView), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return listWorkflows(reader.db(), req.query);
    },
  });

  api.get('/v1/workflows/:workflowId', {
    schema: {
      tags: ['workflows'],
      summary: 'One workflow with its steps',
      params: z.object({ workflowId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: WorkflowView, '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const workflow = getWorkflow(reader.db(), req.params.workflowId);
      if (!workflow) throw new PlatformError('NOT_FOUND', `workflow ${req.params.workflowId} not found`);
      return workflow;
    },
  });

  api.get('/v1/nodes/:nodeId/workflows', {
    schema: {
      tags: ['workflows'],
      summary: "A node's workflow history, newest first",
      params: z.object({ nodeId: z.string() }),
      querystring: MinSeqQuery.extend({ limit: z.coerce.number().int().min(1).max(500).default(100) }),
      response: { 200: z.object({ items: z.array(WorkflowView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listNodeWorkflows(reader.db(), req.params.nodeId, req.query.limit) };
    },
  });
};
