import { ApplyHostPlan } from '../../../schemas/fleet/assignmentCommands.ts';
import type { AssignmentEvent } from '../../../schemas/fleet/assignmentEvents.ts';
import type { AssignmentState } from '../../../schemas/fleet/assignmentState.ts';
import { endedRolloutStatuses, rolloutRef } from '../../../schemas/fleet/rolloutViews.ts';
import { nodeRef, type NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { type AggregateLoader, defineCommand } from '../../platform/commands/commandDefinition.ts';
import { assignmentAggregate } from './assignment.ts';

type RolloutRead = NonNullable<(typeof rolloutRef)['stateShape']>;

/** What `fleet.applyPlan` is decided on besides the assignment: the node, and the rollouts of the plan's modules. */
export interface ApplyPlanInputs {
  readonly node: NodeAggregateState;
  /** The plan digest the rollouts were read for (null: no plan then). */
  readonly planDigest: string | null;
  readonly rollouts: ReadonlyMap<string, RolloutRead>;
}

/** The node and, for each module of the host's plan as read now, its rollout (one aggregate per module). */
async function loadApplyPlanInputs(nodeId: string, load: AggregateLoader): Promise<ApplyPlanInputs> {
  const [node, assignment] = await Promise.all([load(nodeRef, nodeId, { fresh: true }), load(assignmentAggregate, nodeId, { fresh: true })]);
  if (!assignment.exists) return { node, planDigest: null, rollouts: new Map() };
  const modules = Object.keys(assignment.plan);
  const states = await Promise.all(modules.map((module) => load(rolloutRef, module, { fresh: true })));
  return { node, planDigest: assignment.planDigest, rollouts: new Map(modules.map((module, i) => [module, states[i]!])) };
}

/**
 * The decision of `fleet.applyPlan`: a request to install the host's pinned plan, recorded with the command's id (the
 * rollout controller derives each `module.apply` id from it, so a redelivered request sends the same commands).
 * Refuses NOT_FOUND for a node not enrolled, PRECONDITION_FAILED when no plan is pinned, ILLEGAL_TRANSITION while a
 * rollout that counts the host is in progress on a module of its plan (that rollout owns the module's version there).
 */
export function decideApplyPlan(nodeId: string, requestId: string, state: AssignmentState, inputs: ApplyPlanInputs): AssignmentEvent[] {
  if (!inputs.node.exists) throw new DomainError('NOT_FOUND', `node ${nodeId} is not enrolled`);
  if (!state.exists) throw new DomainError('PRECONDITION_FAILED', `node ${nodeId} has no plan pinned: assign a template or pin a module first`);
  if (state.planDigest !== inputs.planDigest) {
    throw new DomainError('CONCURRENCY_CONFLICT', `the plan of node ${nodeId} changed while its rollouts were read; send the command again`);
  }
  for (const module of Object.keys(state.plan)) {
    const run = inputs.rollouts.get(module)?.current ?? null;
    if (run !== null && !endedRolloutStatuses.has(run.status) && run.progress.waves.some((wave) => wave.includes(nodeId))) {
      throw new DomainError('ILLEGAL_TRANSITION', `rollout ${run.rolloutId} is ${run.status} on node ${nodeId}: it owns ${module} there`);
    }
  }
  return [{ type: 'HostPlanApplyRequested', data: { nodeId, requestId, plan: state.plan, planDigest: state.planDigest } }];
}

/** `fleet.applyPlan`: install the host's pinned plan now, outside a rollout (docs/modules.md). */
export const applyPlan = defineCommand({
  name: 'fleet.applyPlan',
  exposure: ['operator'],
  schema: ApplyHostPlan,
  aggregate: assignmentAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: (command, load): Promise<ApplyPlanInputs> => loadApplyPlanInputs(command.nodeId, load),
  decide: (command, state, { commandId, dependencies }): AssignmentEvent[] => decideApplyPlan(command.nodeId, commandId, state, dependencies),
});
