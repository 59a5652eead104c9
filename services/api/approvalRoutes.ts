import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getApproval, listApprovals } from '../../projections/workflows/approvals.ts';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { ApprovalView } from '../../schemas/metal/approvalViews.ts';
import { ApproveBatch, RejectBatch } from '../../schemas/metal/workflowCommands.ts';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

const WorkflowParams = z.object({ workflowId: z.string() });
const Decided = z.object({ workflowId: z.string(), seq: z.number().int(), duplicate: z.boolean() });

/**
 * `/v1/approvals`: the quorum batches of destructive workflows. Anyone who may read sees them; only approvers send
 * `approve`/`reject` (signed over the batch digest with their own key, so a stolen API token cannot approve).
 */
export const approvalRoutes: FastifyPluginAsync<{ ctx: ApiContext; bus: CommandBus }> = async (app, { ctx, bus }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const reader = readerOf(ctx, 'workflows');
  const waitTimeoutMs = ctx.config.readYourWritesTimeoutMs;

  api.get('/v1/approvals', {
    schema: {
      tags: ['approvals'],
      summary: 'Approval batches, newest first (state=pending: what approvers have to sign)',
      querystring: MinSeqQuery.extend({ state: ApprovalView.shape.state.optional(), limit: z.coerce.number().int().min(1).max(500).default(100) }),
      response: { 200: z.object({ items: z.array(ApprovalView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listApprovals(reader.db(), { ...(req.query.state ? { state: req.query.state } : {}), limit: req.query.limit }) };
    },
  });

  api.get('/v1/approvals/:workflowId', {
    schema: {
      tags: ['approvals'],
      summary: 'One approval batch',
      params: WorkflowParams,
      querystring: MinSeqQuery,
      response: { 200: ApprovalView, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const approval = getApproval(reader.db(), req.params.workflowId);
      if (!approval) throw new PlatformError('NOT_FOUND', `no approval batch for workflow ${req.params.workflowId}`);
      return approval;
    },
  });

  for (const verdict of ['approve', 'reject'] as const) {
    const body = verdict === 'approve' ? ApproveBatch.omit({ workflowId: true }) : RejectBatch.omit({ workflowId: true });
    api.post(`/v1/approvals/:workflowId/${verdict}`, {
      schema: {
        tags: ['approvals'],
        summary: verdict === 'approve' ? 'Add a signed approval to a batch' : 'Reject a batch (signed): the workflow fails, nothing destructive is sent',
        params: WorkflowParams,
        body,
        response: { 200: Decided, 201: Decided, '4xx': Problem, '5xx': Problem },
      },
      handler: async (req, reply) => {
        const result = await bus.execute({
          name: `workflow.${verdict}`,
          payload: { workflowId: req.params.workflowId, ...(req.body as object) },
          actor: req.principal?.actor ?? 'http:anonymous',
        });
        const decided = { workflowId: req.params.workflowId, seq: result.seq, duplicate: result.duplicate || result.events.length === 0 };
        return reply.code(decided.duplicate ? 200 : 201).send(decided);
      },
    });
  }
};
