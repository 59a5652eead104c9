import { moduleOfRollout, RolloutCommand } from '../../../schemas/fleet/rolloutCommands.ts';
import type { RolloutEvent } from '../../../schemas/fleet/rolloutEvents.ts';
import type { RolloutStatus } from '../../../schemas/fleet/rolloutViews.ts';
import { rolloutVerbFrom } from '../../../schemas/fleet/rolloutVerbs.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { rolledBack } from './controllerCommands.ts';
import { decideProgress, evolveProgress, rollbackTargets } from './progress.ts';
import { rolloutAggregate, type RolloutRun } from './rollout.ts';
import { runOf } from './rolloutPlan.ts';

/**
 * An operator's verb on a rollout: from the statuses in `from` it decides the events; in a status of `done` it was
 * already done (a redelivery) and appends nothing; anywhere else it is refused (ILLEGAL_TRANSITION).
 */
interface Verb {
  from: readonly RolloutStatus[];
  done: readonly RolloutStatus[];
  decide(run: RolloutRun): RolloutEvent[];
}

function operatorVerb<const N extends string>(name: N, verb: Verb) {
  return defineCommand({
    name,
    exposure: ['operator'],
    schema: RolloutCommand,
    aggregate: rolloutAggregate,
    aggregateId: (command) => moduleOfRollout(command.rolloutId),
    decide(command, state): RolloutEvent[] {
      const found = runOf(state, command.rolloutId);
      if ('ended' in found) throw new DomainError('ILLEGAL_TRANSITION', `rollout ${command.rolloutId} has ended: a later rollout of its module ran`);
      const { run } = found;
      if (verb.done.includes(run.status)) return [];
      if (!verb.from.includes(run.status)) throw new DomainError('ILLEGAL_TRANSITION', `${name}: rollout ${run.rolloutId} is ${run.status}`);
      return verb.decide(run);
    },
  });
}

/** `fleet.pauseRollout`: no further wave starts; what the wave in flight reports still counts. */
export const pauseRollout = operatorVerb('fleet.pauseRollout', {
  from: rolloutVerbFrom.pause,
  done: ['paused'],
  decide: (run) => [{ type: 'RolloutPaused', data: { rolloutId: run.rolloutId } }],
});

/** `fleet.resumeRollout`: waves start again. */
export const resumeRollout = operatorVerb('fleet.resumeRollout', {
  from: rolloutVerbFrom.resume,
  done: ['running'],
  decide: (run) => [{ type: 'RolloutResumed', data: { rolloutId: run.rolloutId } }],
});

/**
 * `fleet.continueRollout` (after a halt): the failed hosts are accepted and the next wave may start; the breaker counts
 * afresh. A halt on the last wave's last report completes the rollout here.
 */
export const continueRollout = operatorVerb('fleet.continueRollout', {
  from: rolloutVerbFrom.continue,
  // `completed`: a continue past the last wave's halt completes the rollout, and its redelivery must find it done.
  done: ['running', 'paused', 'completed'],
  decide(run) {
    const after = evolveProgress(run.progress, { type: 'Continued' }, run.options);
    const events: RolloutEvent[] = [{ type: 'RolloutContinued', data: { rolloutId: run.rolloutId, accepted: [...after.accepted] } }];
    if (decideProgress(after).action === 'complete') events.push({ type: 'RolloutCompleted', data: { rolloutId: run.rolloutId } });
    return events;
  },
});

/**
 * `fleet.rollbackRollout` (halted or paused): the hosts that reported the new version applied go back to the version the
 * rollout moved from. Refused while a started host has not reported (at most its wave's timeout): the targets are then
 * final, so no host that switches late is left out.
 */
export const rollbackRollout = operatorVerb('fleet.rollbackRollout', {
  from: rolloutVerbFrom.rollback,
  done: ['rolling-back', 'rolled-back'],
  decide(run) {
    const inFlight = run.progress.waves
      .slice(0, run.progress.startedWaves)
      .flat()
      .filter((host) => !Object.hasOwn(run.progress.outcomes, host));
    if (inFlight.length > 0) {
      throw new DomainError('ILLEGAL_TRANSITION', `rollout ${run.rolloutId} waits for ${inFlight.join(', ')} to report before it can roll back`);
    }
    const targets = rollbackTargets(run.progress.waves, run.progress.outcomes);
    const events: RolloutEvent[] = [{ type: 'RolloutRollbackStarted', data: { rolloutId: run.rolloutId, version: run.fromVersion, targets } }];
    if (targets.length === 0) events.push(rolledBack(run.rolloutId, [], {}));
    return events;
  },
});

/**
 * `fleet.abortRollout`: stops the rollout (a rollback too) where it is; hosts keep what they run. A rollout awaiting
 * approval is aborted this way too (nothing ran): it is how an operator withdraws a plan the approvers will not sign.
 */
export const abortRollout = operatorVerb('fleet.abortRollout', {
  from: rolloutVerbFrom.abort,
  done: ['aborted'],
  decide: (run) => [{ type: 'RolloutAborted', data: { rolloutId: run.rolloutId } }],
});

export const rolloutOperatorCommands = [pauseRollout, resumeRollout, continueRollout, rollbackRollout, abortRollout] as const;
