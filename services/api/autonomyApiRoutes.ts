import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { controlsOf } from '../../projections/autonomy/queries.ts';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { ApproveDecision, RejectDecision } from '../../schemas/autonomy/decisionCommands.ts';
import { PassMarker } from '../../schemas/autonomy/signals.ts';
import { PolicyView } from '../../schemas/autonomy/views.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { APPROVERS_ID } from '../../schemas/trust/approvals.ts';
import { approversRef } from '../../schemas/trust/approversState.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { declaredPolicies } from '../autonomy/policies.ts';
import { PluginCatalog } from '../plugins/pluginCatalog.ts';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

const DecisionParams = z.object({ decisionId: z.string() });
const Decided = z.object({ decisionId: z.string(), seq: z.number().int(), duplicate: z.boolean(), events: z.array(z.string()) });

/**
 * `/v1/autonomy/…` beyond the read model: the declared policies with what is in force, recent sensor passes (from
 * `BC_SIGNALS`, not the log), and approve / reject, which approver tokens send, and admin tokens only while no approver
 * quorum is set.
 */
export const autonomyApiRoutes: FastifyPluginAsync<{ ctx: ApiContext; bus: CommandBus }> = async (app, { ctx, bus }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const reader = readerOf(ctx, 'autonomy');
  const plugins = new PluginCatalog(ctx.nc, ctx.store);

  api.get('/v1/autonomy/policies', {
    schema: {
      tags: ['autonomy'],
      summary: 'Declared intervention categories (built in and those of registered plugins), their dispositions in force and paused owners',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(PolicyView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, ctx.config.readYourWritesTimeoutMs);
      const controls = controlsOf(reader.db());
      // The registry from the log (one small aggregate): a plugin registered a moment ago is listed already.
      return {
        items: declaredPolicies(await plugins.registry()).map(({ declaration: p, pluginId }) => ({
          ...p,
          pluginId,
          effectiveDisposition: controls.overrides[p.category] ?? p.disposition,
          overridden: p.category in controls.overrides,
          paused: controls.halted || controls.pausedOwners.includes(p.owner),
        })),
      };
    },
  });

  api.get('/v1/autonomy/passes', {
    schema: {
      tags: ['autonomy'],
      summary: 'Recent sensor passes, newest first: each sensor ok or failed, what it assessed, how many signals',
      querystring: z.object({ limit: z.coerce.number().int().min(1).max(200).default(20) }),
      response: { 200: z.object({ items: z.array(PassMarker) }), '5xx': Problem },
    },
    handler: async (req) => {
      const info = await ctx.store.jsm.streams.info(Streams.signals.name, { subjects_filter: Subjects.allPassMarkers }).catch(() => undefined);
      // Pass ids start with their time in base 36, so the greatest subjects are the newest passes.
      const subjects = Object.keys(info?.state.subjects ?? {})
        .sort()
        .reverse()
        .slice(0, req.query.limit);
      const items: PassMarker[] = [];
      for (const subject of subjects) {
        const msg = await ctx.store.jsm.direct.getMessage(Streams.signals.name, { last_by_subj: subject });
        const parsed = msg ? PassMarker.safeParse(msg.json()) : undefined;
        if (parsed?.success) items.push(parsed.data);
      }
      return { items };
    },
  });

  for (const verdict of ['approve', 'reject'] as const) {
    const body = verdict === 'approve' ? ApproveDecision.omit({ decisionId: true }) : RejectDecision.omit({ decisionId: true });
    api.post(`/v1/autonomy/decisions/:decisionId/${verdict}`, {
      schema: {
        tags: ['autonomy'],
        summary:
          verdict === 'approve'
            ? 'Approve the pending request (approver tokens, admin tokens only without a quorum; with a quorum, a signature over this episode of the request)'
            : 'Reject the pending request (the key cools down; approver tokens, admin tokens only without a quorum)',
        params: DecisionParams,
        body,
        response: { 200: Decided, 201: Decided, '4xx': Problem, '5xx': Problem },
      },
      handler: async (req, reply) => {
        if (req.principal?.role === 'admin' && (await bus.repository.load(approversRef, APPROVERS_ID, 'leader')).state.threshold > 0) {
          throw new PlatformError('FORBIDDEN', 'an approver quorum is set: only approver tokens answer autonomy requests (admins change the approver set)');
        }
        const result = await bus.execute({
          name: `autonomy.${verdict}`,
          payload: { decisionId: req.params.decisionId, ...req.body },
          actor: req.principal?.actor ?? 'http:anonymous',
        });
        const decided = {
          decisionId: req.params.decisionId,
          seq: result.seq,
          duplicate: result.duplicate || result.events.length === 0,
          events: result.events.map((e) => e.type),
        };
        return reply.code(decided.duplicate ? 200 : 201).send(decided);
      },
    });
  }
};
