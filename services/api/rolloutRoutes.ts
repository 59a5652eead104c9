import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { hostsRunning } from '../../projections/modules/rolloutQueries.ts';
import { CommandResult, MinSeqQuery, Problem } from '../../schemas/api.ts';
import { ApproveRollout, RejectRollout, RolloutId, StartRollout, StartRolloutRequest } from '../../schemas/fleet/rolloutCommands.ts';
import { RolloutVerb } from '../../schemas/fleet/rolloutVerbs.ts';
import { planRollout } from '../fleet/rollout/rolloutPlan.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

const Headers = z.object({ 'idempotency-key': z.string().optional() }).passthrough();

/** The operator verbs on a rollout, by the last segment of their route. */
const verbs: Record<RolloutVerb, string> = {
  pause: 'fleet.pauseRollout',
  resume: 'fleet.resumeRollout',
  continue: 'fleet.continueRollout',
  rollback: 'fleet.rollbackRollout',
  abort: 'fleet.abortRollout',
};

const PlanAnswer = z.object({ hosts: z.array(z.string()), waves: z.array(z.array(z.string())), planDigest: z.string() });

/**
 * Rollouts (docs/modules.md). `POST /v1/rollouts/plan` answers the waves and the digest a start would have, appending
 * nothing; `POST /v1/rollouts` sends `fleet.startRollout`. Both take the hosts from the body or, by default, every host
 * the `modules` read model shows pinning the module at `fromVersion` (`?minSeq=` to wait for an assignment just made);
 * the decider checks each against its assignment in the log. `POST /v1/rollouts/:rolloutId/{pause,resume,continue,
 * rollback,abort}` send the operator's verbs (the same commands as `POST /v1/commands/fleet.<verb>Rollout`).
 * `POST /v1/rollouts/:rolloutId/approve` (approver tokens only, `accessPolicy.ts`) sends `fleet.approveRollout`: under
 * an approver quorum a rollout awaits its threshold of signed approvals of its plan digest before its first wave.
 * `POST /v1/rollouts/:rolloutId/reject` (approver tokens only) sends `fleet.rejectRollout`: one approver's signed
 * rejection ends it.
 */
export const rolloutRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const reader = readerOf(ctx, 'modules');

  async function startOf(request: StartRolloutRequest, minSeq: number | undefined): Promise<StartRollout> {
    let hosts = request.hosts;
    if (hosts === undefined) {
      await reader.waitFor(minSeq, ctx.config.readYourWritesTimeoutMs);
      hosts = hostsRunning(reader.db(), request.module, request.fromVersion, request.template);
      if (hosts.length === 0) {
        const of = request.template === undefined ? '' : ` of template ${request.template}`;
        throw new PlatformError('PRECONDITION_FAILED', `no host${of} has a plan that pins ${request.module} at ${request.fromVersion}`);
      }
    }
    return StartRollout.parse({ ...request, hosts });
  }

  const execute = (name: string, payload: unknown, key: string | undefined, actor: string | undefined) =>
    ctx.bus.execute({ name, payload, ...(key !== undefined ? { idempotencyKey: key } : {}), actor: actor ?? 'http:anonymous' });

  api.post('/v1/rollouts/plan', {
    schema: {
      tags: ['modules'],
      summary: 'The waves and plan digest a rollout would have (what an approver signs); nothing is appended',
      querystring: MinSeqQuery,
      body: StartRolloutRequest,
      response: { 200: PlanAnswer, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      const command = await startOf(req.body, req.query.minSeq);
      return { hosts: [...new Set(command.hosts)].sort(), ...planRollout(command) };
    },
  });

  api.post('/v1/rollouts', {
    schema: {
      tags: ['modules'],
      summary: 'Start a rollout of a module to another version (fleet.startRollout)',
      querystring: MinSeqQuery,
      headers: Headers,
      body: StartRolloutRequest,
      response: { 200: CommandResult, 201: CommandResult, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const command = await startOf(req.body, req.query.minSeq);
      const result = await execute('fleet.startRollout', command, req.headers['idempotency-key'], req.principal?.actor);
      return reply.code(result.events.length > 0 && !result.duplicate ? 201 : 200).send(result);
    },
  });

  api.post('/v1/rollouts/:rolloutId/approve', {
    schema: {
      tags: ['modules'],
      summary: "Approve a rollout's plan: an approver's signature over rolloutApprovalText('approve', { rolloutId, planDigest })",
      params: z.object({ rolloutId: RolloutId }),
      headers: Headers,
      body: ApproveRollout.omit({ rolloutId: true }),
      response: { 200: CommandResult, 201: CommandResult, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const payload = { rolloutId: req.params.rolloutId, ...req.body };
      const result = await execute('fleet.approveRollout', payload, req.headers['idempotency-key'], req.principal?.actor);
      return reply.code(result.events.length > 0 && !result.duplicate ? 201 : 200).send(result);
    },
  });

  api.post('/v1/rollouts/:rolloutId/reject', {
    schema: {
      tags: ['modules'],
      summary: "Reject a rollout awaiting approval: an approver's signature over rolloutApprovalText('reject', { rolloutId, planDigest }); it ends the rollout",
      params: z.object({ rolloutId: RolloutId }),
      headers: Headers,
      body: RejectRollout.omit({ rolloutId: true }),
      response: { 200: CommandResult, 201: CommandResult, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const payload = { rolloutId: req.params.rolloutId, ...req.body };
      const result = await execute('fleet.rejectRollout', payload, req.headers['idempotency-key'], req.principal?.actor);
      return reply.code(result.events.length > 0 && !result.duplicate ? 201 : 200).send(result);
    },
  });

  api.post('/v1/rollouts/:rolloutId/:verb', {
    schema: {
      tags: ['modules'],
      summary: 'Pause, resume, continue (after a halt), roll back or abort a rollout',
      params: z.object({ rolloutId: RolloutId, verb: RolloutVerb }),
      headers: Headers,
      response: { 200: CommandResult, 201: CommandResult, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const { rolloutId, verb } = req.params;
      const result = await execute(verbs[verb], { rolloutId }, req.headers['idempotency-key'], req.principal?.actor);
      return reply.code(result.events.length > 0 && !result.duplicate ? 201 : 200).send(result);
    },
  });
};
