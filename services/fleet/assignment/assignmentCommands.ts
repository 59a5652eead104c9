import { AssignTemplate, PinModule, UnpinModule } from '../../../schemas/fleet/assignmentCommands.ts';
import type { AssignmentEvent } from '../../../schemas/fleet/assignmentEvents.ts';
import type { AssignmentState } from '../../../schemas/fleet/assignmentState.ts';
import type { ModulePin } from '../../../schemas/fleet/closure.ts';
import { type AggregateLoader, defineCommand } from '../../platform/commands/commandDefinition.ts';
import { assignmentAggregate } from './assignment.ts';
import { type AssignmentTarget, type ClosureInputs, loadClosureInputs } from './closureInputs.ts';
import { applyPlan } from './applyPlan.ts';
import { decideHostPlan, requireAssignableNode } from './hostPlan.ts';

const pinsOf = (state: AssignmentState): readonly ModulePin[] => (state.exists ? state.pins : []);
const templateOf = (state: AssignmentState): string | null => (state.exists ? state.template : null);

/** What a command asks the host's plan to be resolved from, given the host's assignment now. */
type Target<P> = (command: P, state: AssignmentState) => AssignmentTarget;

const assignTarget: Target<AssignTemplate> = (command, state) => ({ template: command.template, pins: command.pins ?? pinsOf(state) });
const pinTarget: Target<PinModule> = (command, state) => ({
  template: templateOf(state),
  pins: [...pinsOf(state).filter((p) => p.module !== command.module), { module: command.module, version: command.version }],
});
const unpinTarget: Target<UnpinModule> = (command, state) => ({ template: templateOf(state), pins: pinsOf(state).filter((p) => p.module !== command.module) });

/**
 * The closure inputs of the target. The command alone does not tell the host's template and pins, so the assignment
 * is read first. Should another command change it before this one is decided, the inputs were loaded for another
 * target: the decider refuses (CONCURRENCY_CONFLICT), and the kernel decides once more on fresh reads.
 */
async function inputsFor<P extends { nodeId: string }>(command: P, target: Target<P>, load: AggregateLoader): Promise<ClosureInputs> {
  const state = await load(assignmentAggregate, command.nodeId, { fresh: true });
  return loadClosureInputs(command.nodeId, target(command, state), load);
}

/** `fleet.assignTemplate`: the host runs the template's closure (with its pins, or those the command gives). */
export const assignTemplate = defineCommand({
  name: 'fleet.assignTemplate',
  exposure: ['operator'],
  schema: AssignTemplate,
  aggregate: assignmentAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: (command, load): Promise<ClosureInputs> => inputsFor(command, assignTarget, load),
  decide: (command, state, { dependencies }): AssignmentEvent[] => decideHostPlan(command.nodeId, assignTarget(command, state), state, dependencies),
});

/**
 * `fleet.pinModule`: the host runs exactly this version of the module, the rest re-resolved around it. The engine
 * sends it too: the rollout controller pins the hosts of an ended rollout to what they run.
 */
export const pinModule = defineCommand({
  name: 'fleet.pinModule',
  exposure: ['operator', 'engine'],
  schema: PinModule,
  aggregate: assignmentAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: (command, load): Promise<ClosureInputs> => inputsFor(command, pinTarget, load),
  decide: (command, state, { dependencies }): AssignmentEvent[] => decideHostPlan(command.nodeId, pinTarget(command, state), state, dependencies),
});

/** `fleet.unpinModule`: the template decides the module again; unpinning what is not pinned appends nothing. */
export const unpinModule = defineCommand({
  name: 'fleet.unpinModule',
  exposure: ['operator'],
  schema: UnpinModule,
  aggregate: assignmentAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: (command, load): Promise<ClosureInputs> => inputsFor(command, unpinTarget, load),
  decide(command, state, { dependencies }): AssignmentEvent[] {
    if (!pinsOf(state).some((p) => p.module === command.module)) {
      requireAssignableNode(command.nodeId, dependencies.node);
      return [];
    }
    return decideHostPlan(command.nodeId, unpinTarget(command, state), state, dependencies);
  },
});

export const assignmentCommands = [assignTemplate, pinModule, unpinModule, applyPlan] as const;
