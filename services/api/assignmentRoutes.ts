import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '../../schemas/api.ts';
import { AssignmentDryRunRequest } from '../../schemas/fleet/assignmentCommands.ts';
import { ClosureConflict, ClosurePlan, ModulePin, PinDiff } from '../../schemas/fleet/closure.ts';
import { ResourceId } from '../../schemas/ids.ts';
import { assignmentAggregate } from '../fleet/assignment/assignment.ts';
import { loadClosureInputs } from '../fleet/assignment/closureInputs.ts';
import { planDigestOf, requireAssignableNode, sortedPins } from '../fleet/assignment/hostPlan.ts';
import { dryRunAssignment } from '../fleet/template/dryRun.ts';
import type { AggregateLoader } from '../platform/commands/commandDefinition.ts';
import type { ApiContext } from './apiContext.ts';

const DryRunAnswer = z.object({
  nodeId: z.string(),
  template: z.string().nullable(),
  pins: z.array(ModulePin),
  /** Whether the template and pins resolve: then `plan`, its digest and `diff`; else every conflict. */
  ok: z.boolean(),
  plan: ClosurePlan.nullable(),
  planDigest: z.string().nullable(),
  conflicts: z.array(ClosureConflict),
  /** What assigning it would change from the host's current plan. */
  diff: PinDiff.nullable(),
});

/**
 * `POST /v1/fleet/assignments/:nodeId/dry-run`: what `fleet.assignTemplate` would give the host (the template and
 * pins of the body, each defaulting to the host's current ones), read from the log with the decider's own loader and
 * resolver, and what it would change. Nothing is appended.
 */
export const assignmentRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const load: AggregateLoader = async (aggregate, id) => (await ctx.bus.repository.load(aggregate, id)).state;

  api.post('/v1/fleet/assignments/:nodeId/dry-run', {
    schema: {
      tags: ['modules'],
      summary: "Dry run of assigning a template and pins to a host: the plan and the diff from the host's current plan",
      params: z.object({ nodeId: ResourceId }),
      body: AssignmentDryRunRequest,
      response: { 200: DryRunAnswer, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      const { nodeId } = req.params;
      const current = await load(assignmentAggregate, nodeId);
      const target = {
        template: req.body.template ?? (current.exists ? current.template : null),
        pins: sortedPins(req.body.pins ?? (current.exists ? current.pins : [])),
      };
      const inputs = await loadClosureInputs(nodeId, target, load);
      requireAssignableNode(nodeId, inputs.node);
      const [run] = dryRunAssignment({
        template: target.template ?? undefined,
        templates: inputs.templates,
        catalogue: inputs.catalogue,
        hosts: [{ host: nodeId, current: current.exists ? current.plan : {}, pins: target.pins }],
      });
      const result = run!.result;
      return {
        nodeId,
        ...target,
        ok: result.ok,
        plan: result.ok ? result.plan : null,
        planDigest: result.ok ? planDigestOf(result.plan) : null,
        conflicts: result.ok ? [] : result.conflicts,
        diff: run!.diff,
      };
    },
  });
};
