import type { HostPlanApplyRequested } from '../../../schemas/fleet/assignmentEvents.ts';
import type { EventOf } from '../../../schemas/eventCatalog.ts';
import { idFor } from '../../../schemas/ids.ts';
import { isRolloutActive } from '../../fleet/rollout/rollout.ts';
import type { Reaction } from '../../platform/processManager/processManager.ts';
import type { RolloutControllerModel } from './controllerModel.ts';

/**
 * `module.apply` of one module of a host's pinned plan, asked by `fleet.applyPlan` (not a rollout): `requestId` is that
 * command's id, the agent command's workflow; `commandId` derives from it and the module, so a redelivered request
 * sends the same command and the bus (or the agent's journal) drops the repeat.
 */
export interface PlanApplyTask {
  readonly type: 'plan.apply';
  readonly commandId: string;
  readonly requestId: string;
  readonly host: string;
  readonly module: string;
  readonly version: string;
}

/** How long a plan's `module.apply` stays valid: a host offline longer does not switch when it comes back unasked. */
export const PLAN_APPLY_VALID_MS = 30 * 60_000;

/** The id of the `module.apply` of `module` asked by the request `requestId`. */
export const planApplyId = (requestId: string, module: string): string => idFor('plan-apply', `${requestId}/${module}`);

/**
 * What the controller does about a request to install a host's plan: a `module.apply` of each module of the plan the
 * host does not already report active at that version (its latest verified heartbeat), keyed by host so one host's
 * applies go out in order. A module an active rollout counts the host in is left to that rollout (the command refused
 * such a request; a rollout started since owns it as well).
 */
export function decidePlanApply(event: EventOf<typeof HostPlanApplyRequested>, model: RolloutControllerModel): Reaction<PlanApplyTask>[] {
  const { nodeId: host, requestId, plan } = event.data;
  const effects = Object.entries(plan)
    .filter(([module, version]) => {
      const seen = model.observation(host, module);
      if (seen !== undefined && seen.version === version && seen.state === 'active') return false;
      const run = model.rollouts.get(module)?.state.current ?? null;
      return !(isRolloutActive(run) && run.progress.waves.some((wave) => wave.includes(host)));
    })
    .map(([module, version]) => ({
      kind: 'task' as const,
      task: { type: 'plan.apply' as const, commandId: planApplyId(requestId, module), requestId, host, module, version },
    }));
  return effects.length === 0 ? [] : [{ key: `plan/${host}`, effects }];
}
