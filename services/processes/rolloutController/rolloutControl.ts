import type { HostModuleObservation } from '../../../schemas/agent/hostModuleObservation.ts';
import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { assignmentEvents } from '../../../schemas/fleet/assignmentEvents.ts';
import { moduleEvents } from '../../../schemas/fleet/modules.ts';
import { rolloutEvents } from '../../../schemas/fleet/rolloutEvents.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import type { DefinitionsOf, Effect, ProcessManager, Reaction } from '../../platform/processManager/processManager.ts';
import type { ApplyRefusal } from './applyResults.ts';
import { type ControllerInput, RolloutControllerModel } from './controllerModel.ts';
import { decidePlanApply, type PlanApplyTask } from './planApplyReactions.ts';
import { decideRolloutReactions, type ModuleApplyTask } from './rolloutReactions.ts';

export const ROLLOUT_CONTROLLER_DURABLE = 'rollout_controller';
/**
 * The fleet module's events: rollouts, published module versions and assignments (a plan's apply request; nats-server
 * 2.9 takes one filter subject per consumer). Its templates come too; the catalog leaves them out unread.
 */
export const ROLLOUT_EVENTS_FILTER = Subjects.moduleEvents('fleet');

const catalog = new EventCatalog([...rolloutEvents, ...moduleEvents, ...assignmentEvents]);

/** What the controller performs: a rollout's `module.apply`, or one of a plan an operator asked installed. */
export type ControllerTask = ModuleApplyTask | PlanApplyTask;
/** The events the controller reads. */
export type RolloutControlEvents = DefinitionsOf<typeof catalog>;

/** What the controller hears outside the log: the modules of verified heartbeats, and verified refused applies. */
export type ControllerObservation = HostModuleObservation | ApplyRefusal;

const inputOf = (observation: ControllerObservation): ControllerInput =>
  'kind' in observation ? { type: 'refused', refusal: observation } : { type: 'observed', observation };

export interface RolloutControlOptions {
  /** How often deadlines are read (a wave's timed-out hosts, a rollback's). */
  readonly tickMs: number;
  readonly ackWaitMs?: number;
  /** Sends a `module.apply` task's agent command to its host (idempotent on its command id). */
  apply(task: ControllerTask, model: RolloutControllerModel, signal: AbortSignal): Promise<void>;
}

/**
 * `rollout-controller`, the process manager of rollouts (issue 35): folds the rollout and module events, the modules
 * of verified heartbeats and the verified results of applies a host refused (`observed`) and its clock, decides with `decideRolloutReactions`, and performs `module.apply`
 * by sending the host a signed-result agent command. Its start resyncs like a tick: what the log and the heartbeats
 * heard since say is recorded, and a deadline passed while no instance ran is read as soon as its clock ticks.
 */
export function rolloutControl(
  options: RolloutControlOptions,
): ProcessManager<RolloutControlEvents, RolloutControllerModel, ControllerTask, ControllerObservation> {
  return {
    durable: ROLLOUT_CONTROLLER_DURABLE,
    filter: ROLLOUT_EVENTS_FILTER,
    catalog,
    ackWaitMs: options.ackWaitMs ?? 30_000,
    maxInFlight: 64,
    tickMs: options.tickMs,
    model: new RolloutControllerModel(),
    evolve(model, input) {
      if (input.type === 'event') model.apply({ type: 'event', event: input.event });
      else if (input.type === 'tick') model.apply({ type: 'tick', now: input.now });
      else if (input.type === 'observed') model.apply(inputOf(input.observation));
    },
    decide(input, model): Reaction<ControllerTask>[] {
      if (input.type === 'resumed') return decideRolloutReactions({ type: 'tick', now: input.now }, model);
      if (input.type === 'observed') return decideRolloutReactions(inputOf(input.observation), model);
      if (input.type === 'event' && input.event.type === 'HostPlanApplyRequested') return decidePlanApply(input.event, model);
      return decideRolloutReactions(input, model);
    },
    async perform(task, model, signal): Promise<Effect<ControllerTask>[]> {
      await options.apply(task, model, signal);
      return [];
    },
  };
}
