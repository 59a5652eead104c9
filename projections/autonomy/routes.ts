import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { BudgetView, ControlsView, DecisionHistoryEntry, DecisionView } from '../../schemas/autonomy/views.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { controlsOf, decisionHistory, getDecision, listBudgets, listDecisions } from './queries.ts';

/** `GET /v1/autonomy/{decisions,decisions/:id,budgets,controls}` from the `autonomy` read model, with `?minSeq=`. */
export const autonomyRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number }> = async (app, { reader, waitTimeoutMs }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/autonomy/decisions', {
    schema: {
      tags: ['autonomy'],
      summary: 'Decisions (status=pending: approval requests with their expiry)',
      querystring: MinSeqQuery.extend({
        status: DecisionView.shape.status.optional(),
        category: z.string().max(63).optional(),
        owner: z.string().max(63).optional(),
        limit: z.coerce.number().int().min(1).max(1_000).default(100),
      }),
      response: { 200: z.object({ items: z.array(DecisionView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const { status, category, owner, limit } = req.query;
      return { items: listDecisions(reader.db(), { ...(status ? { status } : {}), ...(category ? { category } : {}), ...(owner ? { owner } : {}), limit }) };
    },
  });

  api.get('/v1/autonomy/decisions/:decisionId', {
    schema: {
      tags: ['autonomy'],
      summary: 'One decision with its history (signal, policy, plan and digest, approvers, remediation, outcomes)',
      params: z.object({ decisionId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: DecisionView.extend({ history: z.array(DecisionHistoryEntry) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const decision = getDecision(reader.db(), req.params.decisionId);
      if (!decision) throw new PlatformError('NOT_FOUND', `decision ${req.params.decisionId} not found`);
      return { ...decision, history: decisionHistory(reader.db(), decision.decisionId) };
    },
  });

  api.get('/v1/autonomy/budgets', {
    schema: {
      tags: ['autonomy'],
      summary: 'Consent budgets by scope: uses in the sliding window ending now, and when the next is admitted once used up',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(BudgetView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listBudgets(reader.db()) };
    },
  });

  api.get('/v1/autonomy/controls', {
    schema: {
      tags: ['autonomy'],
      summary: 'Halt switch, paused owners, disposition overrides',
      querystring: MinSeqQuery,
      response: { 200: ControlsView, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return controlsOf(reader.db());
    },
  });
};
