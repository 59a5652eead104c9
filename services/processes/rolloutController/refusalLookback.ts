import { outcomeOf } from '../../fleet/rollout/progress.ts';
import type { RolloutControllerModel } from './controllerModel.ts';

/** How far before a wave's start its refusals are read: the decider's clock and the stream's may differ a little. */
export const REFUSAL_CLOCK_SLACK_MS = 60_000;

/**
 * Where the watch of refused applies starts when the controller starts (`now`, after its model caught up with the
 * log): bounded by the rollouts, not by a fixed day. A refusal answers a `module.apply` sent after its wave started
 * (a restore: after the last wave started, since a rollback needs every started host reported), and only counts for
 * a host with no outcome yet; so the watch reads from the earliest start among the waves of active rollouts that still
 * wait for a host (the last started wave while rolling back), less the clock slack. With none, from `now`: what is
 * sent later is heard as it is stored. A rollout paused for days is read from its wave's start, however long ago.
 */
export function refusalLookbackStart(model: RolloutControllerModel, now: number): number {
  let since = now;
  for (const { state, waves } of model.rollouts.values()) {
    const run = state.current;
    if (run === null || model.activeRun(run.rolloutId) === undefined) continue;
    const started = waves.slice(0, run.progress.startedWaves);
    if (run.status === 'rolling-back') {
      const last = started.at(-1);
      if (last !== undefined) since = Math.min(since, last.startedAt);
      continue;
    }
    started.forEach((times, wave) => {
      const waiting = (run.progress.waves[wave] ?? []).some((host) => outcomeOf(run.progress.outcomes, host) === undefined);
      if (waiting) since = Math.min(since, times.startedAt);
    });
  }
  return since === now ? now : since - REFUSAL_CLOCK_SLACK_MS;
}
